package notifier

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// A delivered frame carries its seq. The notifier puts the seq into the
// bytes it stored instead of encoding the frame again; a client must get
// the very bytes json.Marshal gives for the frame with its seq, whatever
// the frame's kind, or (for bytes not laid out as Marshal lays out a
// frame) the frame encoded anew.
func TestDeliveredFrameIsTheStoredFrameWithItsSeq(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 123, time.UTC)
	frames := []contracts.ServerFrame{
		{Type: contracts.FrameUserMessage, ConversationID: "c1", TurnID: "t1", At: at,
			UserMessage: &contracts.UserMessage{ID: "t1", Text: `say "hi", {"type":"x"}`}},
		{Type: contracts.FrameAnswer, ConversationID: "c1", TurnID: "t1", At: at, Answer: &contracts.Answer{TurnID: "t1", Content: "Done ✓"}},
		{Type: contracts.FrameClarify, ConversationID: "c1", TurnID: "t2", At: at, Clarify: &contracts.Clarify{TurnID: "t2", Question: "How much?"}},
		{Type: contracts.FrameProposal, ConversationID: "c1", TurnID: "t3", At: at,
			Proposal: &contracts.Proposal{ProposalID: "p1", TurnID: "t3", Tool: contracts.ToolAddExpense, Summary: "Add coffee"}},
		{Type: contracts.FrameToolResult, ConversationID: "c1", TurnID: "t4", At: at, Tool: &contracts.ToolProgress{CallID: "k1", Tool: contracts.ToolListExpenses, Status: "succeeded"}},
		{Type: contracts.FrameNotification, At: at, Notification: &contracts.Notification{ID: "n1", Kind: "import_completed", Title: "Imported", CreatedAt: at}},
		{Type: contracts.FrameError, ConversationID: "c1", TurnID: "t5", At: at, Error: &contracts.ErrorBody{Code: "model_unavailable", Message: "Try again."}},
	}
	for _, f := range frames {
		stored, err := json.Marshal(&f)
		if err != nil {
			t.Fatal(err)
		}
		for _, seq := range []int64{1, 9, 1234567890123} {
			f.Seq = seq
			want, err := json.Marshal(&f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := withSeq(stored, f)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s frame, seq %d: delivered\n%s\nwant\n%s", f.Type, seq, got, want)
			}
			// Bytes laid out otherwise (here: indented) are encoded anew.
			odd, _ := json.MarshalIndent(struct{ Type string }{f.Type}, "", " ")
			if got, err := withSeq(odd, f); err != nil || string(got) != string(want) {
				t.Errorf("%s frame from bytes not laid out as Marshal's: delivered\n%s (%v)\nwant\n%s", f.Type, got, err, want)
			}
		}
		f.Seq = 0
	}
}
