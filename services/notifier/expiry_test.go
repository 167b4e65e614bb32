package notifier

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// A warning that a proposal is about to expire reaches the inbox once,
// however often it is sent; a proposal a newer one replaced replays as
// superseded, not expired, and one nobody approved in time as expired.
func TestExpiryWarningsAndOutcomes(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			n, _ := newNotifier(t, e.DSN(t))
			now := time.Now().UTC()
			note, _ := json.Marshal(contracts.Notification{ID: "pexp-p1", Kind: "proposal_expiring", Title: "A change waits for your yes until 10:30",
				Body: "Add expense 'lunch' £12.50?", Data: json.RawMessage(`{"proposal_id":"p1","conversation_id":"c1"}`), CreatedAt: now})
			for range 2 {
				m := message.NewMessage("n-pexp-p1", note)
				m.Metadata.Set(bus.MetaSubject, "purser.notify.acme.ann")
				if err := n.HandleNotify(m); err != nil {
					t.Fatal(err)
				}
			}
			inbox := ask(t, n, bus.NotifierNotifications(), "acme.ann", ``)
			if inbox.Error != nil || len(inbox.Notifications) != 1 || inbox.Notifications[0].Kind != "proposal_expiring" {
				t.Fatalf("inbox = %+v", inbox)
			}

			st := n.store.(*store.Store)
			for _, p := range []struct{ id, status string }{{"p1", store.ProposalSuperseded}, {"p2", store.ProposalExpired}} {
				if err := st.CreateProposal(context.Background(), store.Proposal{ID: p.id, TenantID: "acme", UserID: "ann", ConversationID: "c1", TurnID: "t1",
					Tool: contracts.ToolAddExpense, Args: json.RawMessage(`{}`), Summary: "Add?", Status: p.status, Revision: 1, ExpiresAt: now.Add(time.Hour), CreatedAt: now}); err != nil {
					t.Fatal(err)
				}
				if err := n.HandleAgent(agentMsg("e-"+p.id, "ann", contracts.TypeProposal, contracts.Proposal{ProposalID: p.id, TurnID: "t1",
					Tool: contracts.ToolAddExpense, Args: json.RawMessage(`{}`), Summary: "Add?", ExpiresAt: now.Add(time.Hour)})); err != nil {
					t.Fatal(err)
				}
			}
			r := ask(t, n, bus.NotifierResume(), "acme.ann", `{"after_seq":0}`)
			got := map[string]string{}
			for _, raw := range r.Frames {
				var f contracts.ServerFrame
				if err := json.Unmarshal(raw, &f); err == nil && f.Proposal != nil {
					got[f.Proposal.ProposalID] = f.Proposal.Status
				}
			}
			if got["p1"] != "superseded" || got["p2"] != "expired" {
				t.Fatalf("replayed statuses = %v, want p1 superseded and p2 expired", got)
			}
		})
	}
}
