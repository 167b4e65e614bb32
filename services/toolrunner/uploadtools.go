package toolrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/uploads"
	"github.com/purser-ai/purser/pkg/contracts"
)

// UploadSource gives the files people uploaded (internal/uploads). Every
// lookup names the person a signed request is for, so one person's
// upload never reaches another's tools.
type UploadSource interface {
	Get(ctx context.Context, tenant, user, doc string, max int64) (uploads.Manifest, []byte, error)
	PutReading(ctx context.Context, tenant, user, doc string, reading []byte) error
	Reading(ctx context.Context, tenant, user, doc string) ([]byte, error)
}

// UploadReader reads an uploaded file as what its content is: a bank
// statement or a receipt (statements.Parser, in its sandbox).
type UploadReader interface {
	ReadUpload(ctx context.Context, filename string, data []byte, hints ParseHints) (UploadDocument, error)
}

// UploadDocument is an uploaded file as read.
type UploadDocument struct {
	Kind      string // contracts.UploadStatement or contracts.UploadReceipt
	Statement Statement
	Receipt   *contracts.ReceiptRead
}

// MaxUploadBytes bounds what the tools read of one upload; the ingress
// refuses larger files before they are stored.
const MaxUploadBytes = 64 << 20

// Uploads are the tools over uploaded files.
type Uploads struct {
	Source UploadSource
	Reader UploadReader
	// Hints gives a user's defaults for reading a statement; nil gives none.
	Hints func(ctx context.Context, tenantID, userID string) ParseHints
}

// Tools are read_upload and import_upload, and add_expense keeping the
// receipt it was read from: add replaces the catalog's add_expense.
func (u *Uploads) Tools(add Tool) []Tool {
	const outputCap = 64 << 10
	run := add.Run
	add.Run = func(ctx context.Context, tx Tx, c Call) (Output, error) { return u.addWithReceipt(ctx, tx, c, run) }
	return []Tool{
		{Name: contracts.ToolReadUpload, Kind: contracts.KindRead, Deadline: 3 * time.Minute, OutputCap: outputCap, PerMinute: 20, Run: u.read},
		{Name: contracts.ToolImportUpload, Kind: contracts.KindMutation, Deadline: 30 * time.Second, OutputCap: outputCap, PerMinute: 20, Run: u.importUpload},
		add,
	}
}

// get returns the caller's upload, or a tool error a person understands.
func (u *Uploads) get(ctx context.Context, c Call, doc string) (uploads.Manifest, []byte, error) {
	m, data, err := u.Source.Get(ctx, c.Caller.TenantID, c.Caller.UserID, doc, MaxUploadBytes)
	if errors.Is(err, uploads.ErrNotFound) {
		return m, nil, fail(contracts.CodeNotFound, "That upload is not here: it was never uploaded by you, or it was kept past its time. Please upload the file again.")
	}
	if err != nil {
		return m, nil, fmt.Errorf("get upload: %w", err)
	}
	return m, data, nil
}

func (u *Uploads) read(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.ReadUploadArgs)
	if raw, err := u.Source.Reading(ctx, c.Caller.TenantID, c.Caller.UserID, a.DocumentID); err == nil {
		var out contracts.UploadRead
		if json.Unmarshal(raw, &out) == nil && out.DocumentID == a.DocumentID && out.Kind != contracts.UploadStatement {
			// A receipt or an unreadable file reads the same again; a
			// statement's preview depends on the ledger, so it is redone.
			return Output{Data: out}, nil
		}
	}
	m, data, err := u.get(ctx, c, a.DocumentID)
	if err != nil {
		return Output{}, err
	}
	name := fileName(m.Filename)
	out := contracts.UploadRead{DocumentID: a.DocumentID, Filename: name}
	var hints ParseHints
	if u.Hints != nil {
		hints = u.Hints(ctx, c.Caller.TenantID, c.Caller.UserID)
	}
	doc, err := u.Reader.ReadUpload(ctx, name, data, hints)
	var ie *ImportError
	switch {
	case errors.As(err, &ie):
		out.Kind, out.Problem = contracts.UploadUnreadable, ie.Reason
	case err != nil:
		return Output{}, fmt.Errorf("read upload: %w", err)
	case doc.Kind == contracts.UploadReceipt && doc.Receipt != nil:
		out.Kind, out.Receipt = contracts.UploadReceipt, doc.Receipt
	default:
		out.Kind = contracts.UploadStatement
		pv := previewStatement(ctx, tx, c.Caller.TenantID, c.Caller.UserID, File{Name: name, Data: data}, doc.Statement)
		if pv.Err != nil {
			return Output{}, pv.Err
		}
		out.Statement = &pv.FilePreview
	}
	if raw, err := json.Marshal(out); err == nil {
		// Kept so the same file is not read twice (OCR takes seconds);
		// losing it costs only time.
		_ = u.Source.PutReading(ctx, c.Caller.TenantID, c.Caller.UserID, a.DocumentID, raw)
	}
	return Output{Data: out}, nil
}

func (u *Uploads) importUpload(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.ImportUploadArgs)
	m, data, err := u.get(ctx, c, a.DocumentID)
	if err != nil {
		return Output{}, err
	}
	name := fileName(m.Filename)
	id, sum := DocumentID(c.Caller.TenantID, c.Caller.UserID, data)
	if id != a.DocumentID {
		return Output{}, fail(contracts.CodeInvalidArgs, "That upload's content does not match its id; please upload the file again.")
	}
	id, err = importAgainID(ctx, tx, c.Caller.TenantID, c.Caller.UserID, id)
	if err != nil {
		return Output{}, err
	}
	d, created, err := tx.PutDocument(ctx, store.Document{TenantID: c.Caller.TenantID, ID: id, UserID: c.Caller.UserID, SHA256: sum,
		Filename: name, MediaType: m.MediaType, Size: int64(len(data)), Content: data, Status: store.DocumentQueued, CreatedAt: c.Now})
	if err != nil {
		return Output{}, err
	}
	out := contracts.UploadImported{DocumentID: a.DocumentID, Filename: name, Status: "duplicate"}
	if !created {
		return Output{Data: out}, nil
	}
	out.Status = "queued"
	return Output{Data: out, Jobs: []contracts.ImportJob{{TenantID: d.TenantID, UserID: d.UserID, DocumentID: d.ID}}}, nil
}

// addWithReceipt adds the expense, and when it was read from an uploaded
// receipt keeps the file and its line items with it, in the same
// transaction.
func (u *Uploads) addWithReceipt(ctx context.Context, tx Tx, c Call, add func(context.Context, Tx, Call) (Output, error)) (Output, error) {
	a := c.Args.(*contracts.AddExpenseArgs)
	if a.DocumentID == nil {
		return add(ctx, tx, c)
	}
	m, data, err := u.get(ctx, c, *a.DocumentID)
	if err != nil {
		return Output{}, err
	}
	out, err := add(ctx, tx, c)
	if err != nil {
		return out, err
	}
	var reading string
	if raw, err := u.Source.Reading(ctx, c.Caller.TenantID, c.Caller.UserID, *a.DocumentID); err == nil {
		reading = string(raw)
	}
	detail := "a receipt"
	if ch, ok := out.Data.(contracts.ExpenseChanged); ok {
		detail = fmt.Sprintf("the receipt of expense %d", ch.Expense.ID)
	}
	id, sum := DocumentID(c.Caller.TenantID, c.Caller.UserID, data)
	if id, err = importAgainID(ctx, tx, c.Caller.TenantID, c.Caller.UserID, id); err != nil {
		return Output{}, err
	}
	if _, _, err := tx.PutDocument(ctx, store.Document{TenantID: c.Caller.TenantID, ID: id, UserID: c.Caller.UserID, SHA256: sum,
		Filename: fileName(m.Filename), MediaType: m.MediaType, Size: int64(len(data)), Content: data,
		Status: store.DocumentImported, Detail: detail, Imported: 1, Reading: reading, CreatedAt: c.Now}); err != nil {
		return Output{}, err
	}
	return out, nil
}
