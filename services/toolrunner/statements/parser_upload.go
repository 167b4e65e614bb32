package statements

import (
	"context"
	"errors"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

var _ toolrunner.UploadReader = Parser{}

// ReadUpload implements toolrunner.UploadReader: an uploaded file read in
// the sandbox, once, as a statement or a receipt, whichever its content
// is; the person's default currency and date order stand in for what the
// file does not say.
func (p Parser) ReadUpload(ctx context.Context, name string, data []byte, h toolrunner.ParseHints) (toolrunner.UploadDocument, error) {
	s := *p.Sandbox
	if h.DefaultCurrency != "" {
		s.Options.DefaultCurrency = h.DefaultCurrency
	}
	if h.DateOrder != "" {
		s.Options.DateOrder = h.DateOrder
	}
	d, err := s.ReadDocument(ctx, name, data, ReceiptOptions{Currency: h.DefaultCurrency, DateOrder: h.DateOrder})
	var f *Failure
	if errors.As(err, &f) {
		return toolrunner.UploadDocument{}, &toolrunner.ImportError{Reason: f.Reason}
	}
	if err != nil {
		return toolrunner.UploadDocument{}, err
	}
	if d.Kind == KindReceipt {
		return toolrunner.UploadDocument{Kind: contracts.UploadReceipt, Receipt: receiptRead(d.Receipt)}, nil
	}
	return toolrunner.UploadDocument{Kind: contracts.UploadStatement, Statement: Lines(*d.Statement)}, nil
}

// receiptRead is a receipt as the tools' contract carries it.
func receiptRead(r *Receipt) *contracts.ReceiptRead {
	out := &contracts.ReceiptRead{Merchant: r.Merchant, Date: r.Date, Total: r.Total, Currency: r.Currency, ReadBy: r.ReadBy, Unsure: r.Unsure}
	for _, it := range r.Items {
		out.Items = append(out.Items, contracts.ReceiptItem{Text: it.Text, Amount: it.Amount})
	}
	return out
}
