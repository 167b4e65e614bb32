package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Proposal statuses.
const (
	ProposalPending  = "pending"
	ProposalApproved = "approved"
	ProposalRejected = "rejected"
	ProposalExecuted = "executed"
	ProposalExpired  = "expired"
	// ProposalSuperseded is a proposal a newer one replaced before anyone
	// decided it.
	ProposalSuperseded = "superseded"
)

// Proposal is a mutation waiting for, or past, the user's decision. Args
// are the canonical arguments the toolrunner must see unchanged.
type Proposal struct {
	ID             string
	TenantID       string
	UserID         string
	ConversationID string
	TurnID         string
	Tool           string
	Args           json.RawMessage
	Summary        string
	Status         string
	Revision       int
	ExpiresAt      time.Time
	CreatedAt      time.Time
	DecidedAt      *time.Time
}

// CreateProposal stores p. Storing the same id again returns ErrConflict
// and leaves the first unchanged.
func (s *Store) CreateProposal(ctx context.Context, p Proposal) error {
	n, err := s.exec(ctx, `INSERT INTO proposals (tenant_id, id, user_id, conversation_id, turn_id, tool, args, summary,
		status, revision, expires_at, created_at, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id, id) DO NOTHING`,
		p.TenantID, p.ID, p.UserID, p.ConversationID, p.TurnID, p.Tool, jsonArg(p.Args), p.Summary,
		p.Status, p.Revision, s.d.ts(p.ExpiresAt), s.d.ts(s.orNow(p.CreatedAt)), s.d.optTS(p.DecidedAt))
	if err != nil {
		return fmt.Errorf("create proposal: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("create proposal %s: %w", p.ID, ErrConflict)
	}
	return nil
}

// GetProposal returns the tenant's proposal, or ErrNotFound.
func (s *Store) GetProposal(ctx context.Context, tenantID, id string) (Proposal, error) {
	p := Proposal{TenantID: tenantID, ID: id}
	err := s.readRow(ctx, `SELECT user_id, conversation_id, turn_id, tool, args, summary, status, revision,
		expires_at, created_at, decided_at FROM proposals WHERE tenant_id = ? AND id = ?`, []any{tenantID, id},
		&p.UserID, &p.ConversationID, &p.TurnID, &p.Tool, jsonCol{&p.Args}, &p.Summary, &p.Status, &p.Revision,
		timeCol{&p.ExpiresAt}, timeCol{&p.CreatedAt}, optTimeCol{&p.DecidedAt})
	if err != nil {
		return Proposal{}, fmt.Errorf("get proposal: %w", notFound(err))
	}
	return p, nil
}

// TransitionProposal moves the proposal from status from to status to,
// atomically. ErrNotFound if it does not exist for the tenant, ErrConflict if
// its status is no longer from: of two concurrent approvals one wins.
func (s *Store) TransitionProposal(ctx context.Context, tenantID, id, from, to string, at time.Time) error {
	// One statement, so no transaction of its own (on Postgres that is
	// two round trips fewer); the read after a miss only tells a missing
	// proposal from one in another state.
	n, err := s.exec(ctx, `UPDATE proposals SET status = ?, decided_at = ? WHERE tenant_id = ? AND id = ? AND status = ?`,
		to, s.d.ts(s.orNow(at)), tenantID, id, from)
	if err != nil {
		return fmt.Errorf("transition proposal: %w", err)
	}
	if n == 1 {
		return nil
	}
	if _, err := s.GetProposal(ctx, tenantID, id); err != nil {
		return err
	}
	return fmt.Errorf("transition proposal %s from %s: %w", id, from, ErrConflict)
}

// PendingProposals returns the user's proposals in a conversation that
// still wait for a decision and have not expired at now, oldest first.
func (s *Store) PendingProposals(ctx context.Context, tenantID, userID, conversationID string, now time.Time, limit int) ([]Proposal, error) {
	rows, err := s.query(ctx, `SELECT id, turn_id, tool, args, summary, status, revision, expires_at, created_at FROM proposals
		WHERE tenant_id = ? AND user_id = ? AND conversation_id = ? AND status = ? AND expires_at > ? ORDER BY created_at, id`+limitClause(limit), tenantID, userID, conversationID, ProposalPending, s.d.ts(now))
	if err != nil {
		return nil, fmt.Errorf("pending proposals: %w", err)
	}
	defer rows.Close()
	var out []Proposal
	for rows.Next() {
		p := Proposal{TenantID: tenantID, UserID: userID, ConversationID: conversationID}
		if err := rows.Scan(&p.ID, &p.TurnID, &p.Tool, jsonCol{&p.Args}, &p.Summary, &p.Status, &p.Revision,
			timeCol{&p.ExpiresAt}, timeCol{&p.CreatedAt}); err != nil {
			return nil, fmt.Errorf("pending proposals: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
