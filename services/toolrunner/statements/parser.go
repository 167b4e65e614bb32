package statements

import (
	"context"
	"errors"

	"github.com/purser-ai/purser/services/toolrunner"
)

// Parser is the toolrunner's statement parser: the sandbox, with its
// failures told as import errors a person can read.
type Parser struct{ Sandbox *Sandbox }

var _ toolrunner.Parser = Parser{}

var _ toolrunner.HintedParser = Parser{}

// Parse implements toolrunner.Parser with the sandbox's own options.
func (p Parser) Parse(ctx context.Context, name string, data []byte) (toolrunner.Statement, error) {
	return p.parse(ctx, p.Sandbox, name, data)
}

// ParseWithHints implements toolrunner.HintedParser: the user's default
// currency and date order stand in for the sandbox's where given.
func (p Parser) ParseWithHints(ctx context.Context, name string, data []byte, h toolrunner.ParseHints) (toolrunner.Statement, error) {
	s := *p.Sandbox
	if h.DefaultCurrency != "" {
		s.Options.DefaultCurrency = h.DefaultCurrency
	}
	if h.DateOrder != "" {
		s.Options.DateOrder = h.DateOrder
	}
	return p.parse(ctx, &s, name, data)
}

func (p Parser) parse(ctx context.Context, s *Sandbox, name string, data []byte) (toolrunner.Statement, error) {
	r, err := s.Parse(ctx, name, data)
	var f *Failure
	if errors.As(err, &f) {
		return toolrunner.Statement{}, &toolrunner.ImportError{Reason: f.Reason}
	}
	if err != nil {
		return toolrunner.Statement{}, err
	}
	return Lines(r), nil
}

// Lines is what a file held as the toolrunner's statement: every line
// with the bank's id and account when the file gave them.
func Lines(r Result) toolrunner.Statement {
	out := toolrunner.Statement{Warnings: r.Warnings, Format: r.Format, Uncertain: r.Uncertain}
	for _, t := range r.Transactions {
		out.Transactions = append(out.Transactions, toolrunner.StatementLine{Date: t.Date, AmountMinor: t.AmountMinor, Currency: t.Currency,
			Description: t.Description, Vendor: t.Vendor, Category: t.Category, FITID: t.FITID, Account: t.Account,
			NeedsReview: t.NeedsReview, ReviewReason: t.ReviewReason})
	}
	return out
}
