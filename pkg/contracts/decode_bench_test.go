package contracts

import "testing"

// BenchmarkDecode decodes and validates a turn as the orchestrator
// receives one, and the same turn with an unknown field, refused.
//
//	go test -run '^$' -bench Decode ./pkg/contracts
func BenchmarkDecode(b *testing.B) {
	turn := []byte(`{"turn_id":"t-5c1e4f0a9d2b","tenant_id":"bench3","user_id":"u0042","roles":["owner"],"conversation_id":"c-0042","text":"how much did I spend on groceries this month?","timezone":"Europe/London","currency":"GBP","sent_at":"2026-11-27T23:40:00Z"}`)
	b.Run("valid", func(b *testing.B) {
		for b.Loop() {
			var t UserTurn
			if err := Decode(turn, &t); err != nil {
				b.Fatal(err)
			}
		}
	})
	unknown := append([]byte(`{"extra":1,`), turn[1:]...)
	b.Run("unknown-field", func(b *testing.B) {
		for b.Loop() {
			var t UserTurn
			if err := Decode(unknown, &t); err == nil {
				b.Fatal("an unknown field was accepted")
			}
		}
	})
}
