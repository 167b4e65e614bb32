package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// Looking back through a conversation and searching its messages find
// the same messages for the same words: accents and case folded, a word
// found by its start, request words left out, every word else any.
func TestHistoryAndSearchAgreeOnMessages(t *testing.T) {
	said := []string{
		"My landlord Mr Ortega wants the rent by Friday",
		"Add £12 café au lait",
		"the Cafe on Elm street was closed",
		"Remind me about receipts from Carrefour",
		"I paid the deposit to Ortéga Lettings",
	}
	queries := []string{"landlord", "ortega", "café", "CAFE", "receipt", "carrefour receipts", "find my payments to Ortega",
		"elm friday", "nothing here", "rent deposit"}
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			searcher := toolrunner.NewSearcher(nil, nil, 0, toolrunner.NewSearchMetrics(prometheus.NewRegistry()), slog.New(slog.DiscardHandler))
			tools := append(toolrunner.Catalog(), searcher.Tool())
			s := systest.Start(t, systest.Options{DSN: e.DSN(t), Now: clock, Toolrunners: 1, Tools: tools})
			ctx := context.Background()
			for i, text := range said {
				f := contracts.ServerFrame{Type: contracts.FrameUserMessage, ConversationID: "conv-ann", TurnID: fmt.Sprintf("t%d", i),
					At: clock().UTC(), UserMessage: &contracts.UserMessage{Text: text}}
				raw, _ := json.Marshal(f)
				if _, _, err := s.Store.AppendConversationFrame(ctx, "acme", "ann", "conv-ann", fmt.Sprintf("e%d", i), raw, clock()); err != nil {
					t.Fatal(err)
				}
			}
			for i, q := range queries {
				h := decodeData[contracts.ChatHistory](t, run(t, s, fmt.Sprintf("h%d", i), contracts.ToolGetChatHistory,
					fmt.Sprintf(`{"query":%q,"limit":50}`, q)))
				r := decodeData[contracts.SearchResults](t, run(t, s, fmt.Sprintf("s%d", i), contracts.ToolSearch,
					fmt.Sprintf(`{"query":%q,"only":"message","limit":50}`, q)))
				var fromHistory, fromSearch []string
				for _, m := range h.Messages {
					fromHistory = append(fromHistory, fmt.Sprint(m.Position))
				}
				for _, res := range r.Results {
					fromSearch = append(fromSearch, res.ID)
				}
				slices.Sort(fromHistory)
				slices.Sort(fromSearch)
				if !slices.Equal(fromHistory, fromSearch) {
					t.Errorf("%q: history found messages %v, search %v", q, fromHistory, fromSearch)
				}
			}
		})
	}
}
