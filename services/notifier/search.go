package notifier

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Searcher answers a person's search (GET /v1/search): the toolrunner's,
// given by the wiring, so that the page and the tool rank alike.
type Searcher interface {
	SearchFor(ctx context.Context, tenant, user string, req contracts.SearchRequest) (contracts.SearchResults, error)
}

// RecordStore reads the records a citation names.
type RecordStore interface {
	LedgerEntryOf(ctx context.Context, tenantID, userID, kind string, id int64) (store.LedgerEntry, error)
	LedgerEntriesOfDocument(ctx context.Context, tenantID, userID, documentID string, limit int) ([]store.LedgerEntry, error)
	GetDocument(ctx context.Context, tenantID, id string) (store.Document, error)
}

var _ RecordStore = (*store.Store)(nil)

// maxFileInReply is the largest file a record reply carries (base64
// grows it by a third, and a reply must stay under maxReplyBytes).
const maxFileInReply = 360 << 10

// WithSearch has the notifier answer searches with s and read cited
// records from rs. Without it, both answer unavailable.
func (n *Notifier) WithSearch(s Searcher, rs RecordStore) *Notifier {
	n.searcher, n.records = s, rs
	return n
}

// search answers GET /v1/search: any query finds records or none.
func (n *Notifier) search(ctx context.Context, tenant, user string, req contracts.SearchRequest) (contracts.SearchReply, error) {
	if n.searcher == nil {
		return contracts.SearchReply{}, unavailable().Error
	}
	res, err := n.searcher.SearchFor(ctx, tenant, user, req)
	if err != nil {
		return contracts.SearchReply{}, fmt.Errorf("search: %w", err)
	}
	if res.Results == nil {
		res.Results = []contracts.SearchResult{}
	}
	return contracts.SearchReply{SearchResults: res}, nil
}

// record answers GET /v1/ledger/entries/{id} and GET /v1/documents/{id}:
// the caller's own record, else not found (another person's included, so
// that nobody learns it exists).
func (n *Notifier) record(ctx context.Context, tenant, user string, req contracts.RecordRequest) (contracts.RecordReply, error) {
	if n.records == nil {
		return contracts.RecordReply{}, unavailable().Error
	}
	missing := &contracts.InboxError{Code: contracts.InboxNotFound, Message: "no such " + req.Kind}
	if req.Kind == contracts.SearchKindEntry {
		kind, idText, _ := strings.Cut(req.ID, "-")
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil || (kind != store.LedgerExpense && kind != store.LedgerTransaction) {
			return contracts.RecordReply{}, missing
		}
		e, err := n.records.LedgerEntryOf(ctx, tenant, user, kind, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return contracts.RecordReply{}, missing
		case err != nil:
			return contracts.RecordReply{}, err
		}
		v := ledgerEntryView(e)
		return contracts.RecordReply{Entry: &v}, nil
	}
	d, err := n.records.GetDocument(ctx, tenant, req.ID)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && d.UserID != user:
		return contracts.RecordReply{}, missing
	case err != nil:
		return contracts.RecordReply{}, err
	}
	entries, err := n.records.LedgerEntriesOfDocument(ctx, tenant, user, d.ID, 200)
	if err != nil {
		return contracts.RecordReply{}, err
	}
	v := &contracts.DocumentView{ID: d.ID, Filename: contracts.PlainText(d.Filename), MediaType: d.MediaType, SenderDomain: contracts.PlainText(d.SenderDomain),
		Status: d.Status, Detail: contracts.PlainText(d.Detail), Imported: d.Imported, Size: d.Size, CreatedAt: d.CreatedAt.UTC().Format(time.RFC3339),
		FileKept: len(d.Content) > 0}
	for _, e := range entries {
		v.Entries = append(v.Entries, ledgerEntryView(e))
	}
	if req.File && len(d.Content) > 0 {
		if len(d.Content) > maxFileInReply {
			v.FileTooLarge = true
		} else {
			v.Content = d.Content
		}
	}
	return contracts.RecordReply{Document: v}, nil
}

// ledgerEntryView is an entry as the ledger API shows it.
func ledgerEntryView(e store.LedgerEntry) contracts.LedgerEntry {
	return contracts.LedgerEntry{
		ID: e.Kind + "-" + strconv.FormatInt(e.ID, 10), Kind: e.Kind, Date: e.Date,
		Amount:      contracts.Money{Minor: e.AmountMinor, Currency: e.Currency},
		Description: contracts.PlainText(e.Description), Category: contracts.PlainText(e.Category),
		Account: contracts.PlainText(e.Account), Source: e.DocumentID, Links: ledgerLinks(e),
	}
}
