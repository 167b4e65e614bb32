package app

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/pgtest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// PostgreSQL crashes while people use purser and comes back: nothing the
// services acknowledged is lost, and they reconnect by themselves. A
// change approved before the crash is still there; a message acked while
// the database was down gets its answer once it is back; and the services
// go on taking turns without a restart of their own.
func TestPostgresRestartLosesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg, err := pgtest.Start(ctx)
	if errors.Is(err, pgtest.ErrNoPostgres) {
		t.Skip("PostgreSQL is not installed here (initdb under /usr/lib/postgresql/*/bin); this test runs a server of its own")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Remove)
	if err := pg.CreateDatabase(ctx, "purser"); err != nil {
		t.Fatal(err)
	}
	svc := startApart(t, pg.URL("purser"))
	c := dial(t, Info{HTTPAddr: svc.ingress}, svc.mint("acme", "ann", auth.RoleMember))
	approve := func(id, proposal string) contracts.ServerFrame {
		t.Helper()
		c.send(`{"type":"confirm","id":"` + id + `","conversation_id":"c1","proposal_id":"` + proposal + `","decision":"approve"}`)
		return c.next(contracts.FrameAnswer)
	}

	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"add coffee £3"}`)
	if a := approve("m1c", c.next(contracts.FrameProposal).Proposal.ProposalID); a.Answer.Added == nil {
		t.Fatalf("before the crash: answer %+v, want an added expense", a.Answer)
	}

	// The crash. A message sent now is queued (acked) though no service
	// can read or write the database.
	pg.Kill()
	c.send(`{"type":"message","id":"m2","conversation_id":"c1","text":"add tea £2"}`)
	if ack := c.next(contracts.FrameAck); ack.Ack == nil || ack.Ack.ID != "m2" {
		t.Fatalf("ack = %+v, want the ack of m2", ack.Ack)
	}
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	p := c.next(contracts.FrameProposal)
	if a := approve("m2c", p.Proposal.ProposalID); a.Answer.Added == nil {
		t.Fatalf("the turn acked while the database was down: answer %+v, want an added expense", a.Answer)
	}
	c.send(`{"type":"message","id":"m3","conversation_id":"c1","text":"add bun £1.50"}`)
	if a := approve("m3c", c.next(contracts.FrameProposal).Proposal.ProposalID); a.Answer.Added == nil {
		t.Fatalf("after the restart: answer %+v, want an added expense", a.Answer)
	}

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
	want := map[string]int64{"coffee": 300, "tea": 200, "bun": 150}
	if len(got) != len(want) {
		t.Fatalf("expenses in the database = %v, want %v", got, want)
	}
	for item, minor := range want {
		if got[item] != minor {
			t.Errorf("expense %s = %d in the database, want %d (all: %v)", item, got[item], minor, got)
		}
	}
}
