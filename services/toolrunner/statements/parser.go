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

// Parse implements toolrunner.Parser.
func (p Parser) Parse(ctx context.Context, name string, data []byte) (toolrunner.Statement, error) {
	r, err := p.Sandbox.Parse(ctx, name, data)
	var f *Failure
	if errors.As(err, &f) {
		return toolrunner.Statement{}, &toolrunner.ImportError{Reason: f.Reason}
	}
	if err != nil {
		return toolrunner.Statement{}, err
	}
	out := toolrunner.Statement{Warnings: r.Warnings}
	for _, t := range r.Transactions {
		out.Transactions = append(out.Transactions, toolrunner.StatementLine{Date: t.Date, AmountMinor: t.AmountMinor, Currency: t.Currency,
			Description: t.Description, Vendor: t.Vendor, Category: t.Category, FITID: t.FITID, NeedsReview: t.NeedsReview, ReviewReason: t.ReviewReason})
	}
	return out, nil
}
