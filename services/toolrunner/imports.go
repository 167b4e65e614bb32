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
	"github.com/purser-ai/purser/internal/wording"
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
	// Format is how the file was read ("csv", "pdf", ...); empty when the
	// parser does not say.
	Format string
	// Uncertain lists, in words, what the parser decided without the file
	// settling it (the day/month order taken, a currency from the user's
	// default, amounts rounded): the preview says them so the user can
	// correct them.
	Uncertain []string
}

// ParseHints are what is known of the user or the account when a file
// does not say: the default currency (ISO 4217) and the day/month order
// of the user's locale ("dmy", "mdy" or a locale such as "en-US").
type ParseHints struct {
	DefaultCurrency string
	DateOrder       string
}

// HintedParser is a Parser that takes the user's hints.
type HintedParser interface {
	ParseWithHints(ctx context.Context, filename string, data []byte, hints ParseHints) (Statement, error)
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
	// Account is the bank account the file names for the line (MT940
	// :25:, OFX ACCTID, camt), empty when it names none.
	Account string
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
	// Hints gives a user's defaults for reading statements; nil gives none,
	// and a file that names no currency then fails with a reason.
	Hints func(ctx context.Context, tenantID, userID string) ParseHints
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
	return i.notify(doc, bus.Headers{Conversation: msg.Metadata.Get(bus.HeaderConversation), Correlation: msg.Metadata.Get(bus.HeaderCorrelation)})
}

// importDocument parses and stores; it returns the document as it ends.
func (i *Importer) importDocument(ctx context.Context, doc store.Document) (store.Document, error) {
	st, err := i.parse(ctx, doc)
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
	for j, key := range DedupeKeys(st.Transactions) {
		l := st.Transactions[j]
		status := store.ReviewOK
		if l.NeedsReview {
			status = store.ReviewNeeds
			review++
		}
		lines = append(lines, store.Transaction{TenantID: doc.TenantID, UserID: doc.UserID, DocumentID: doc.ID, Date: l.Date,
			AmountMinor: l.AmountMinor, Currency: l.Currency, Description: l.Description, Vendor: l.Vendor, Category: l.Category,
			FITID: l.FITID, Account: l.Account, DedupeKey: key, ReviewStatus: status, CreatedAt: i.now()})
	}
	var added int
	err = i.store.InTx(ctx, func(tx *store.Store) error {
		if err := categorizeLines(ctx, tx, lines); err != nil {
			return err
		}
		res, err := tx.ImportTransactions(ctx, lines)
		if err != nil {
			return err
		}
		n := res.New
		added = n
		dup += res.Already
		doc.Status, doc.Imported = store.DocumentImported, n
		doc.Detail = importDetail(n, dup, review, lines, st.Uncertain) + matchDetail(res, lines)
		if err := tx.UpdateDocumentStatus(ctx, doc.TenantID, doc.ID, doc.Status, doc.Detail, n, i.now()); err != nil {
			return err
		}
		return recordImport(ctx, tx, doc, i.now())
	})
	if err != nil {
		return doc, fmt.Errorf("store import %s: %w", doc.ID, err)
	}
	i.result.WithLabelValues("imported").Inc()
	i.rows.Add(float64(added))
	return doc, nil
}

// parse reads the document with the user's hints when the parser takes
// them; a file whose lines end up with no currency cannot be stored.
func (i *Importer) parse(ctx context.Context, doc store.Document) (Statement, error) {
	var st Statement
	var err error
	hp, ok := i.parser.(HintedParser)
	if ok && i.Hints != nil {
		st, err = hp.ParseWithHints(ctx, doc.Filename, doc.Content, i.Hints(ctx, doc.TenantID, doc.UserID))
	} else {
		st, err = i.parser.Parse(ctx, doc.Filename, doc.Content)
	}
	if err != nil {
		return st, err
	}
	for _, l := range st.Transactions {
		if l.Currency == "" {
			return st, &ImportError{Reason: "the file does not say which currency its amounts are in, and no default currency is set for you"}
		}
	}
	return st, nil
}

// DedupeKeys gives each line its key: the bank's id or a hash of date,
// amount, currency and description, and for the second and later of
// identical lines in one file, that key with its occurrence ("#2"). Two
// £3.00 coffees on one day are two transactions; importing the same file
// (or an overlapping statement holding the same pair) again gives the same
// keys, so only a re-import counts as a duplicate.
func DedupeKeys(lines []StatementLine) []string {
	keys := make([]string, len(lines))
	seen := make(map[string]int, len(lines))
	for j, l := range lines {
		key := l.DedupeKey
		if key == "" {
			key = dedupeKey(l)
		}
		seen[key]++
		if n := seen[key]; n > 1 {
			key = fmt.Sprintf("%s#%d", key, n)
		}
		keys[j] = key
	}
	return keys
}

func dedupeKey(l StatementLine) string {
	if l.FITID != "" {
		return "fitid:" + accountFITID(l)
	}
	desc := strings.Join(strings.Fields(strings.ToLower(l.Description)), " ")
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%s|%s", l.Date, l.AmountMinor, l.Currency, desc)))
	return "h:" + hex.EncodeToString(h[:16])
}

func importDetail(added, dup, review int, lines []store.Transaction, uncertain []string) string {
	parts := []string{fmt.Sprintf("%d new transaction%s", added, wording.Plural(added))}
	if len(lines) > 0 {
		from, to := lines[0].Date, lines[0].Date
		for _, l := range lines {
			from, to = min(from, l.Date), max(to, l.Date)
		}
		parts = append(parts, dateSpan(from, to))
	}
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
			ts = append(ts, FormatMinor(m.Minor, m.Currency))
		}
		parts = append(parts, "net "+strings.Join(ts, ", "))
	}
	if len(uncertain) > 0 {
		parts = append(parts, "to check: "+strings.Join(uncertain, "; "))
	}
	return strings.Join(parts, "; ")
}

func dateSpan(from, to string) string {
	if from == to {
		return "dated " + from
	}
	return "dated " + from + " to " + to
}

// unnamedCurrency stands, in a preview, for the currency of lines whose
// file names none when the user has no default currency either.
const unnamedCurrency = "no named currency"

// Preview says what importing a statement would store, for the proposal
// before the user's yes: the file, how many transactions, their dates,
// currencies and net amount, and what is uncertain. Every amount is
// followed by its currency, or by words saying that none is known.
func Preview(filename string, st Statement) string {
	if len(st.Transactions) == 0 {
		return filename + ": no transactions"
	}
	from, to := st.Transactions[0].Date, st.Transactions[0].Date
	var ms []contracts.Money
	review := 0
	for _, l := range st.Transactions {
		from, to = min(from, l.Date), max(to, l.Date)
		ms = append(ms, contracts.Money{Minor: l.AmountMinor, Currency: l.Currency})
		if l.NeedsReview {
			review++
		}
	}
	var ts, ccys []string
	for _, m := range totals(ms) {
		if m.Currency == "" {
			// The file names none and the user has no default: say so
			// rather than leave a gap where the currency goes.
			ts = append(ts, contracts.FormatMinor(m.Minor, "")+" ("+unnamedCurrency+")")
			ccys = append(ccys, unnamedCurrency)
			continue
		}
		ts = append(ts, FormatMinor(m.Minor, m.Currency))
		ccys = append(ccys, m.Currency)
	}
	n := len(st.Transactions)
	parts := []string{fmt.Sprintf("%s: %d transaction%s", filename, n, wording.Plural(n)), dateSpan(from, to),
		"in " + strings.Join(ccys, ", "), "net " + strings.Join(ts, ", ")}
	if review > 0 {
		parts = append(parts, fmt.Sprintf("%d to review", review))
	}
	if len(st.Uncertain) > 0 {
		parts = append(parts, "to check: "+strings.Join(st.Uncertain, "; "))
	}
	return strings.Join(parts, "; ")
}

// notify publishes the import's outcome to the user's NOTIFY subject.
// notify tells the user how the import ended; h carries the conversation
// and correlation of the turn that started it, when known.
func (i *Importer) notify(doc store.Document, h bus.Headers) error {
	// The file's name and the detail (which may quote the file's lines)
	// come from outside: quoted, they show as text in any client.
	n := contracts.Notification{ID: "imp-" + strings.TrimPrefix(doc.ID, "doc-"), CreatedAt: doc.UpdatedAt.UTC(), Body: wording.Shorten(contracts.QuoteText(doc.Detail), 4000)}
	if n.CreatedAt.IsZero() {
		n.CreatedAt = i.now().UTC()
	}
	switch doc.Status {
	case store.DocumentImported:
		n.Kind = "import_completed"
		n.Title = fmt.Sprintf("Imported %d transaction%s from %s", doc.Imported, wording.Plural(doc.Imported), contracts.QuoteText(doc.Filename))
	case store.DocumentFailed:
		n.Kind = "import_failed"
		n.Title = "Could not import " + contracts.QuoteText(doc.Filename)
	default:
		return nil
	}
	n.Title = wording.Shorten(n.Title, 200)
	n.Data, _ = json.Marshal(map[string]any{"document_id": doc.ID, "filename": contracts.PlainText(doc.Filename), "status": doc.Status, "imported": doc.Imported})
	subject, err := bus.NotifySubject(doc.TenantID, doc.UserID)
	if err != nil {
		return bus.Permanent(err)
	}
	payload, err := json.Marshal(n)
	if err != nil {
		return bus.Permanent(err)
	}
	h.Type, h.Tenant, h.User = contracts.TypeNotification, doc.TenantID, doc.UserID
	m := bus.NewMessage("notify-"+n.ID, payload, h)
	if err := i.pub.Publish(subject, m); err != nil {
		return fmt.Errorf("publish notification: %w", err)
	}
	return nil
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
			if err := publishJob(i.pub, contracts.ImportJob{TenantID: d.TenantID, UserID: d.UserID, DocumentID: d.ID}, id, bus.Headers{}); err != nil {
				i.log.Warn("requeue import", "document", d.ID, "err", err)
			}
		}
	}
}

// FormatMinor writes an amount in minor units with its currency's
// decimals: 1250 JPY, 12.50 GBP, 1.250 KWD.
func FormatMinor(minor int64, ccy string) string {
	return contracts.FormatMinor(minor, ccy) + " " + ccy
}
