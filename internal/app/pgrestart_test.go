package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/pgtest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// PostgreSQL crashes while people use purser and comes back: nothing the
// services acknowledged is lost, and they reconnect by themselves. A
// change approved before the crash is still there; a message acked just
// before it gets its proposal once the database is back; a message sent
// while it is down is refused as not queued and taken when sent again;
// and the services go on taking turns without a restart of their own.
func TestPostgresRestartLosesNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg := pgtest.ForTest(t, ctx, "purser")
	svc := startApart(t, pg.URL("purser"))
	c := &backlog{wsClient: dial(t, Info{HTTPAddr: svc.ingress}, svc.mint("acme", "ann", auth.RoleMember))}
	// turn sends frame (a message or a confirm with client id id) until
	// it is acked, as a client does when told "please retry", and returns
	// the frame that ends its turn.
	turn := func(id, frame string) contracts.ServerFrame {
		t.Helper()
		c.send(frame)
		turnID := ""
		for {
			f := c.until(func(f contracts.ServerFrame) bool {
				return (f.Ack != nil && f.Ack.ID == id) || (f.Error != nil && f.Error.ID == id) ||
					(turnID != "" && f.TurnID == turnID && ends(f))
			})
			switch {
			case f.Ack != nil:
				turnID = f.TurnID
			case f.Error != nil && f.Error.ID == id && f.Error.Code == contracts.ErrCodeUnavailable:
				time.Sleep(200 * time.Millisecond) // not queued: send it again
				c.send(frame)
			default:
				return f
			}
		}
	}
	message := func(id, text string) contracts.ServerFrame {
		return turn(id, `{"type":"message","id":"`+id+`","conversation_id":"c1","text":"`+text+`"}`)
	}
	approve := func(id string, p contracts.ServerFrame) {
		t.Helper()
		if p.Proposal == nil {
			t.Fatalf("%s: got %s %+v, want a proposal", id, p.Type, p.Error)
		}
		a := turn(id, `{"type":"confirm","id":"`+id+`","conversation_id":"c1","proposal_id":"`+p.Proposal.ProposalID+`","decision":"approve"}`)
		if a.Answer == nil || a.Answer.Added == nil {
			t.Fatalf("%s: got %s %+v, want an added expense", id, a.Type, a.Error)
		}
	}

	approve("m1c", message("m1", "add coffee £3"))

	// A message acked, and the crash at once, while its turn is in
	// flight (or just done): its proposal comes either way.
	c.send(`{"type":"message","id":"m2","conversation_id":"c1","text":"add tea £2"}`)
	ack := c.until(func(f contracts.ServerFrame) bool { return f.Ack != nil || f.Error != nil })
	if ack.Ack == nil {
		t.Fatalf("m2 was not queued: %+v", ack.Error)
	}
	pg.Kill()
	// While the database is down a new message is refused as not
	// queued, worth sending again: the client knows it was not taken.
	c.send(`{"type":"message","id":"m3","conversation_id":"c1","text":"add bun £1.50"}`)
	if f := c.until(func(f contracts.ServerFrame) bool {
		return f.Error != nil && f.Error.ID == "m3" || f.Ack != nil && f.Ack.ID == "m3"
	}); f.Error == nil || f.Error.Code != contracts.ErrCodeUnavailable {
		t.Fatalf("m3 while the database is down: %s %+v, want an unavailable error", f.Type, f.Error)
	}
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	p2 := c.until(func(f contracts.ServerFrame) bool { return f.TurnID == ack.TurnID && ends(f) })
	approve("m2c", p2)
	approve("m3c", message("m3", "add bun £1.50"))

	db, err := sql.Open("pgx", pg.URL("purser"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got := map[string]int64{}
	rows, err := db.QueryContext(ctx, `SELECT item, amount_minor FROM expenses WHERE tenant_id = 'acme' AND user_id = 'ann'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var item string
		var minor int64
		if err := rows.Scan(&item, &minor); err != nil {
			t.Fatal(err)
		}
		got[item] += minor
	}
	want := map[string]int64{"coffee": 300, "tea": 200, "bun": 150} // each once
	if len(got) != len(want) {
		t.Fatalf("expenses in the database = %v, want %v", got, want)
	}
	for item, minor := range want {
		if got[item] != minor {
			t.Errorf("expense %s = %d in the database, want %d (all: %v)", item, got[item], minor, got)
		}
	}
}

// backlog keeps the frames a wait passed over for the next: frames of
// turns in flight at once arrive in any order.
type backlog struct {
	*wsClient
	skipped []contracts.ServerFrame
}

// until returns the first frame, kept or read, that keep wants, reading
// for at most a minute: the turns here wait out a database restart and
// redeliveries.
func (c *backlog) until(keep func(contracts.ServerFrame) bool) contracts.ServerFrame {
	c.t.Helper()
	for i, f := range c.skipped {
		if keep(f) {
			c.skipped = append(c.skipped[:i:i], c.skipped[i+1:]...)
			return f
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		_, data, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("reading frames: %v", err)
		}
		var f contracts.ServerFrame
		if err := json.Unmarshal(data, &f); err != nil {
			c.t.Fatalf("server sent bad JSON %q: %v", data, err)
		}
		if keep(f) {
			return f
		}
		c.skipped = append(c.skipped, f)
	}
}

// ends reports whether f ends its turn.
func ends(f contracts.ServerFrame) bool {
	return f.Type == contracts.FrameProposal || f.Type == contracts.FrameAnswer || f.Type == contracts.FrameClarify || f.Type == contracts.FrameError
}
