package offline

import (
	"context"
	"testing"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// BenchmarkDecide is the offline model's time to read what people type
// most: the turns `purser bench` sends, a greeting and a dated add.
func BenchmarkDecide(b *testing.B) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, text := range []string{
		"what did I spend this month?",
		"add coffee £3.50",
		"add a taxi ride",
		"hello",
		"spent 12.40 on lunch yesterday",
	} {
		b.Run(text, func(b *testing.B) {
			p := orchestrator.Prompt{Text: text, Now: now, Timezone: "UTC", Currency: "GBP", Tools: contracts.Tools()}
			for b.Loop() {
				if _, err := (Model{}).Decide(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
