package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// On SQLite an outbox row's headers and payload are stored packed, in the
// payload column, with the headers column saying so (outboxPacked). A row
// is written twice in its life (stored, then marked published), and its
// JSON (about 300 bytes of headers and 280 of payload a message in the
// bench) repeats itself: the turn, tenant, user and conversation are in
// both, and every row has the same header names. Packed with a dictionary
// of such messages a row takes about half of its bytes (47% of a bench
// run's rows). Rows stored before are read as they were; Postgres keeps
// both columns as they are.

// outboxPacked is the headers column of a packed row: no JSON reads so.
// Its digit is the dictionary's id; a new dictionary takes a new id and
// the old one stays, to read the rows written with it.
const outboxPacked = "s2:1"

// outboxDictID is the dictionary's id in each packed row.
const outboxDictID byte = 1

// outboxDict is what packed rows are matched against: messages as the
// orchestrator and the relay write them. It must never change, or rows
// packed with it would not unpack.
const outboxDict = `{"Purser-Conversation":"","Purser-Correlation-Id":"t","Purser-Created-At":"2026-01-01T00:00:00.000000000Z","Purser-Tenant":"","Purser-Type":"tool_request","Purser-User":"","traceparent":"00-00000000000000000000000000000000-0000000000000000-01"}
{"call_id":"c","turn_id":"t","tenant_id":"","user_id":"","roles":["member"],"conversation_id":"","tool":"get_balance","args":{"range":"this_month"},"timezone":"UTC","deadline":"2026-01-01T00:00:00.000000000Z"}
{"Purser-Conversation":"","Purser-Correlation-Id":"t","Purser-Created-At":"2026-01-01T00:00:00.000000000Z","Purser-Tenant":"","Purser-Type":"answer","Purser-User":"","traceparent":"00-"}
{"turn_id":"t","content":"You spent £0.00 this month across 0 expenses.","citations":[{"call_id":"c","tool":"get_balance"}],"balance":{"range":"this_month","from":"2026-01-01","to":"2026-01-31","total":[{"minor":0,"currency":"GBP"}],"count":0}}
{"Purser-Conversation":"","Purser-Correlation-Id":"t","Purser-Created-At":"2026-01-01T00:00:00.000000000Z","Purser-Tenant":"","Purser-Type":"proposal","Purser-User":"","traceparent":"00-"}
{"proposal_id":"p","turn_id":"t","tool":"add_expense","args":{"item":"","amount":"0.00","currency":"GBP","date":"2026-01-01"},"summary":"Add expense '' £0.00 on 2026-01-01?","expires_at":"2026-01-01T00:00:00.000000000Z"}
{"call_id":"c","turn_id":"t","tenant_id":"","user_id":"","roles":["owner","member"],"conversation_id":"","tool":"add_expense","args":{"item":"","amount":"0.00","currency":"EUR","date":"2026-01-01","category":"other"},"proposal_id":"p","timezone":"Europe/London","deadline":"2026-01-01T00:00:00.000000000Z"}
{"Purser-Conversation":"","Purser-Correlation-Id":"t","Purser-Created-At":"2026-01-01T00:00:00.000000000Z","Purser-Tenant":"","Purser-Type":"clarify","Purser-User":"","traceparent":"00-"}
{"turn_id":"t","question":"How much was it?"}
{"Purser-Conversation":"","Purser-Correlation-Id":"t","Purser-Created-At":"2026-01-01T00:00:00.000000000Z","Purser-Tenant":"","Purser-Type":"turn_error","Purser-User":"","traceparent":"00-"}
{"turn_id":"t","code":"","message":"","retry_after":0,"refused":false}
{"Purser-Type":"tool_progress","Purser-Type":"notification","Purser-Type":"tool_result","Purser-Type":"import_job"}
`

// outboxPacker packs outbox rows against outboxDict.
var outboxPacker = newPacker(outboxDictID, outboxDict)

// packOutbox is a row's headers (JSON, or empty) and payload in one
// packed value: the headers' length as a uvarint, the headers, the
// payload.
func packOutbox(headers json.RawMessage, payload []byte) []byte {
	plain := make([]byte, 0, binary.MaxVarintLen32+len(headers)+len(payload))
	plain = binary.AppendUvarint(plain, uint64(len(headers)))
	plain = append(append(plain, headers...), payload...)
	return outboxPacker.pack(plain)
}

// unpackOutbox is packOutbox undone.
func unpackOutbox(packed []byte) (json.RawMessage, []byte, error) {
	plain, err := outboxPacker.unpack(packed)
	if err != nil {
		return nil, nil, fmt.Errorf("unpack outbox row: %w", err)
	}
	n, k := binary.Uvarint(plain)
	if k <= 0 || n > uint64(len(plain)-k) {
		return nil, nil, errors.New("unpack outbox row: bad headers length")
	}
	headers := plain[k : k+int(n)]
	if len(headers) == 0 {
		headers = nil
	}
	return headers, plain[k+int(n):], nil
}
