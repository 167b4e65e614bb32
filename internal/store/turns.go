package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TurnChanges is what applying one event changed of a conversation: the
// conversation itself, the messages it emits, and the proposals it made
// or decided.
type TurnChanges struct {
	// Conversation is written if its stored version is still its Version
	// (0: it must not exist yet).
	Conversation Conversation
	Outbox       []OutboxMessage
	// NewProposals are stored as they are; one whose id is stored already
	// is kept unchanged.
	NewProposals []Proposal
	// ProposalChanges move stored proposals from one status to another,
	// decided at At (the store's clock if zero).
	ProposalChanges []ProposalChange
	At              time.Time
}

// ProposalChange moves proposal ID from status From to status To.
type ProposalChange struct {
	ID, From, To string
}

// SaveTurn stores a turn's changes and returns the conversation's new
// version. It may be called again with the same changes (a redelivered
// event): a proposal stored before is kept, a change already made is not
// an error, and one of a proposal that no longer exists is skipped. A
// proposal found in another status than From and To returns ErrConflict,
// as does a conversation whose version moved on; the conversation and its
// outbox are then not written.
//
// The proposal writes and the conversation are one transaction where
// transactions share commits (SQLite's one writer: one write instead of
// two or three). Elsewhere (Postgres) each proposal write is a statement
// of its own, before the conversation: what is not guaranteed there is
// that a conversation that loses its version check leaves no proposal
// write behind; those writes are the ones the event's retry makes again.
func (s *Store) SaveTurn(ctx context.Context, t TurnChanges) (int64, error) {
	if len(t.NewProposals)+len(t.ProposalChanges) > 0 && s.SharesCommits() {
		var v int64
		err := s.InTx(ctx, func(tx *Store) error {
			var err error
			v, err = tx.saveTurn(ctx, t)
			return err
		})
		return v, err
	}
	return s.saveTurn(ctx, t)
}

func (s *Store) saveTurn(ctx context.Context, t TurnChanges) (int64, error) {
	tenant := t.Conversation.TenantID
	for _, p := range t.NewProposals {
		if err := s.CreateProposal(ctx, p); err != nil && !errors.Is(err, ErrConflict) {
			return 0, fmt.Errorf("store proposal: %w", err)
		}
	}
	for _, c := range t.ProposalChanges {
		if err := s.changeProposal(ctx, tenant, c, t.At); err != nil {
			return 0, err
		}
	}
	return s.SaveConversation(ctx, t.Conversation, t.Conversation.Version, t.Outbox)
}

// changeProposal makes one status change, idempotently.
func (s *Store) changeProposal(ctx context.Context, tenant string, c ProposalChange, at time.Time) error {
	err := s.TransitionProposal(ctx, tenant, c.ID, c.From, c.To, at)
	if errors.Is(err, ErrConflict) {
		if p, gerr := s.GetProposal(ctx, tenant, c.ID); gerr == nil && p.Status == c.To {
			err = nil // made before this retry
		}
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("proposal %s %s->%s: %w", c.ID, c.From, c.To, err)
	}
	return nil
}
