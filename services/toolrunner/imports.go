package toolrunner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Parser reads an untrusted statement file, in a sandbox.
type Parser interface {
	Parse(ctx context.Context, filename string, data []byte) (Statement, error)
}

// Statement is what a parser found in a file.
type Statement struct {
	Transactions []StatementLine
	Warnings     []string
}

// StatementLine is one transaction as parsed. DedupeKey is the bank's id
// or a hash of date, amount and description.
type StatementLine struct {
	Date         string
	AmountMinor  int64
	Currency     string
	Description  string
	Vendor       string
	Category     string
	FITID        string
	DedupeKey    string
	NeedsReview  bool
	ReviewReason string
}

// ImportError is a parse failure a person can read ("the file took too
// long to read"). Other errors are treated as transient and retried.
type ImportError struct{ Reason string }

func (e *ImportError) Error() string { return e.Reason }

// ImportStore is what the importer reads and writes.
type ImportStore interface {
	GetDocument(ctx context.Context, tenantID, id string) (store.Document, error)
	HasTransaction(ctx context.Context, tenantID, userID, dedupeKey string) (bool, error)
	QueuedDocuments(ctx context.Context, cutoff time.Time, limit int) ([]store.Document, error)
	InTx(ctx context.Context, fn func(tx *store.Store) error) error
}

// Importer turns queued documents into transactions and tells the user.
type Importer struct {
	store  ImportStore
	parser Parser
	pub    message.Publisher
	log    *slog.Logger
	now    func() time.Time
	result *prometheus.CounterVec
	rows   prometheus.Counter
}

// NewImporter builds the import worker.
func NewImporter(st ImportStore, p Parser, pub message.Publisher, reg prometheus.Registerer, log *slog.Logger, now func() time.Time) *Importer {
	i := &Importer{store: st, parser: p, pub: pub, log: log, now: now,
		result: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_imports_total", Help: "Statement imports by outcome."}, []string{"outcome"}),
		rows:   prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_import_transactions_total", Help: "Transactions added by imports."}),
	}
	reg.MustRegister(i.result, i.rows)
	return i
}

// Register consumes import jobs.
func (i *Importer) Register(r *message.Router, sub message.Subscriber) {
	c := bus.ImportConsumer()
	r.AddConsumerHandler(c.Name, c.Name, sub, i.Handle)
}

// Handle imports one document, once: a document already imported or
// failed only has its notification published again (under the same id,
// so the user sees it once).
func (i *Importer) Handle(msg *message.Message) error {
	var job contracts.ImportJob
	if err := contracts.Decode(msg.Payload, &job); err != nil {
		return bus.Permanent(fmt.Errorf("decode import job: %w", err))
	}
	want, werr := bus.ImportSubject(job.TenantID, job.UserID)
	if err := bus.CheckIdentity(msg, want, werr, job.TenantID, job.UserID, ""); err != nil {
		return err
	}
	ctx := msg.Context()
	doc, err := i.store.GetDocument(ctx, job.TenantID, job.DocumentID)
	if errors.Is(err, store.ErrNotFound) {
		return bus.Permanent(fmt.Errorf("import job for unknown document %s", job.DocumentID))
	} else if err != nil {
		return err
	}
	if doc.UserID != job.UserID {
		return bus.Permanent(fmt.Errorf("import job for another user's document %s", job.DocumentID))
	}
	if doc.Status == store.DocumentQueued {
		if doc, err = i.importDocument(ctx, doc); err != nil {
			return err
		}
	}
	return i.notify(doc)
}

// importDocument parses and stores; it returns the document as it ends.
func (i *Importer) importDocument(ctx context.Context, doc store.Document) (store.Document, error) {
	st, err := i.parser.Parse(ctx, doc.Filename, doc.Content)
	var ie *ImportError
	switch {
	case errors.As(err, &ie):
		i.result.WithLabelValues("failed").Inc()
		doc.Status, doc.Detail = store.DocumentFailed, ie.Reason
		return doc, i.store.InTx(ctx, func(tx *store.Store) error {
			return tx.UpdateDocumentStatus(ctx, doc.TenantID, doc.ID, doc.Status, doc.Detail, 0, i.now())
		})
	case err != nil:
		return doc, fmt.Errorf("parse %s: %w", doc.ID, err)
	}
	lines := make([]store.Transaction, 0, len(st.Transactions))
	review, dup := 0, 0
	seen := map[string]bool{}
	for _, l := range st.Transactions {
		key := l.DedupeKey
		if key == "" {
			key = dedupeKey(l)
		}
		if seen[key] {
			dup++ // the same line twice in one file
			continue
		}
		seen[key] = true
		status := store.ReviewOK
		if l.NeedsReview {
			status = store.ReviewNeeds
			review++
		}
		lines = append(lines, store.Transaction{TenantID: doc.TenantID, UserID: doc.UserID, DocumentID: doc.ID, Date: l.Date,
			AmountMinor: l.AmountMinor, Currency: l.Currency, Description: l.Description, Vendor: l.Vendor, Category: l.Category,
			FITID: l.FITID, DedupeKey: key, ReviewStatus: status, CreatedAt: i.now()})
	}
	var added int
	err = i.store.InTx(ctx, func(tx *store.Store) error {
		n, err := tx.InsertTransactions(ctx, lines)
		if err != nil {
			return err
		}
		added = n
		dup += len(lines) - n
		doc.Status, doc.Imported = store.DocumentImported, n
		doc.Detail = importDetail(n, dup, review, lines)
		return tx.UpdateDocumentStatus(ctx, doc.TenantID, doc.ID, doc.Status, doc.Detail, n, i.now())
	})
	if err != nil {
		return doc, fmt.Errorf("store import %s: %w", doc.ID, err)
	}
	i.result.WithLabelValues("imported").Inc()
	i.rows.Add(float64(added))
	return doc, nil
}

func dedupeKey(l StatementLine) string {
	if l.FITID != "" {
		return "fitid:" + l.FITID
	}
	desc := strings.Join(strings.Fields(strings.ToLower(l.Description)), " ")
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%s|%s", l.Date, l.AmountMinor, l.Currency, desc)))
	return "h:" + hex.EncodeToString(h[:16])
}

func importDetail(added, dup, review int, lines []store.Transaction) string {
	parts := []string{fmt.Sprintf("%d new transaction%s", added, plural(added))}
	if dup > 0 {
		parts = append(parts, fmt.Sprintf("%d already imported", dup))
	}
	if review > 0 {
		parts = append(parts, fmt.Sprintf("%d to review", review))
	}
	if len(lines) > 0 {
		var ms []contracts.Money
		for _, l := range lines {
			ms = append(ms, contracts.Money{Minor: l.AmountMinor, Currency: l.Currency})
		}
		var ts []string
		for _, m := range totals(ms) {
			ts = append(ts, contracts.FormatDecimal(m.Minor)+" "+m.Currency)
		}
		parts = append(parts, "net "+strings.Join(ts, ", "))
	}
	return strings.Join(parts, "; ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// notify publishes the import's outcome to the user's NOTIFY subject.
func (i *Importer) notify(doc store.Document) error {
	n := contracts.Notification{ID: "imp-" + strings.TrimPrefix(doc.ID, "doc-"), CreatedAt: doc.UpdatedAt.UTC(), Body: doc.Detail}
	if n.CreatedAt.IsZero() {
		n.CreatedAt = i.now().UTC()
	}
	switch doc.Status {
	case store.DocumentImported:
		n.Kind = "import_completed"
		n.Title = fmt.Sprintf("Imported %d transaction%s from %s", doc.Imported, plural(doc.Imported), doc.Filename)
	case store.DocumentFailed:
		n.Kind = "import_failed"
		n.Title = "Could not import " + doc.Filename
	default:
		return nil
	}
	n.Title = truncateRunes(n.Title, 200)
	n.Data, _ = json.Marshal(map[string]any{"document_id": doc.ID, "filename": doc.Filename, "status": doc.Status, "imported": doc.Imported})
	subject, err := bus.NotifySubject(doc.TenantID, doc.UserID)
	if err != nil {
		return bus.Permanent(err)
	}
	payload, err := json.Marshal(n)
	if err != nil {
		return bus.Permanent(err)
	}
	m := bus.NewMessage("notify-"+n.ID, payload, bus.Headers{Type: contracts.TypeNotification, Tenant: doc.TenantID, User: doc.UserID})
	if err := i.pub.Publish(subject, m); err != nil {
		return fmt.Errorf("publish notification: %w", err)
	}
	return nil
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Sweep starts again, every interval, imports whose job was lost (queued
// for longer than stale) until ctx ends.
func (i *Importer) Sweep(ctx context.Context, interval, stale time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := i.now()
		docs, err := i.store.QueuedDocuments(ctx, now.Add(-stale), 100)
		if err != nil {
			if ctx.Err() == nil {
				i.log.Warn("import sweep", "err", err)
			}
			continue
		}
		for _, d := range docs {
			id := fmt.Sprintf("import-%s-%d", d.ID, now.Unix()/int64(stale.Seconds()+1))
			if err := publishJob(i.pub, contracts.ImportJob{TenantID: d.TenantID, UserID: d.UserID, DocumentID: d.ID}, id); err != nil {
				i.log.Warn("requeue import", "document", d.ID, "err", err)
			}
		}
	}
}
