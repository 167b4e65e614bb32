package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/purser-ai/purser/internal/wording"
)

// searchDoc is one row of search_docs as the indexer writes it.
type searchDoc struct {
	tenantID, userID, kind, ref string
	parent, title, snippet      string
	body, date, currency        string
	amountMinor                 *int64
}

// queued is one row of search_queue. For a message, the queue's query
// also reads its frame (frame false: the frame is gone).
type queued struct {
	seq                         int64
	tenantID, userID, kind, ref string
	frame                       bool
	conv                        string
	payload                     []byte
	created                     time.Time
}

// IndexSearch brings the search index up to date with up to limit of the
// changes queued by the database's triggers (oldest first) and returns how
// many it took. It is idempotent: a change indexed twice (a crash before
// the queue row went, two indexers at once) gives the same row, and a
// change queued again while it ran stays queued. A thing that no longer
// exists leaves the index.
func (s *Store) IndexSearch(ctx context.Context, limit int) (int, error) {
	return s.indexSearch(ctx, "", "", limit)
}

// IndexSearchFor is IndexSearch for one person's queued changes only: a
// search runs it first, so that a person finds what they just wrote.
func (s *Store) IndexSearchFor(ctx context.Context, tenantID, userID string, limit int) (int, error) {
	if tenantID == "" || userID == "" {
		return 0, errors.New("index search: a tenant and a user are required")
	}
	return s.indexSearch(ctx, tenantID, userID, limit)
}

// SearchQueued says whether the person has changes the index has not
// taken yet; it only reads, so a search can skip the write when none.
func (s *Store) SearchQueued(ctx context.Context, tenantID, userID string) (bool, error) {
	var n int
	err := s.readRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM search_queue WHERE tenant_id = ? AND user_id = ? LIMIT 1) q`,
		[]any{tenantID, userID}, &n)
	if err != nil {
		return false, fmt.Errorf("search queue: %w", err)
	}
	if n == 0 && s.d.name == dialectSQLite {
		past, err := s.messagesPastMark(ctx, tenantID, userID)
		if err != nil {
			return false, fmt.Errorf("search queue: %w", err)
		}
		return past, nil
	}
	return n > 0, nil
}

func (s *Store) indexSearch(ctx context.Context, tenantID, userID string, limit int) (int, error) {
	if limit <= 0 {
		limit = 500
	}
	n := 0
	err := s.InTx(ctx, func(tx *Store) error {
		// A queued message's frame is read with it: one statement for the
		// batch rather than one for each message, which on Postgres is a
		// round trip each.
		q := `SELECT q.seq, q.tenant_id, q.user_id, q.kind, q.ref, f.seq, f.conversation_id, f.payload, f.created_at
			FROM search_queue q LEFT JOIN frames f ON q.kind = '` + SearchMessage + `'
				AND f.tenant_id = q.tenant_id AND f.user_id = q.user_id
				AND f.seq = CASE WHEN q.kind = '` + SearchMessage + `' THEN CAST(q.ref AS BIGINT) END`
		var args []any
		if tenantID != "" {
			q += ` WHERE q.tenant_id = ? AND q.user_id = ?`
			args = append(args, tenantID, userID)
		}
		q += ` ORDER BY q.seq LIMIT ?`
		args = append(args, limit)
		if tx.d.name == dialectPostgres {
			// Two indexers take different rows instead of waiting.
			q += ` FOR UPDATE OF q SKIP LOCKED`
		}
		rows, err := tx.query(ctx, q, args...)
		if err != nil {
			return err
		}
		var todo []queued
		for rows.Next() {
			var r queued
			var frameSeq sql.NullInt64
			var conv sql.NullString
			var created *time.Time
			if err := rows.Scan(&r.seq, &r.tenantID, &r.userID, &r.kind, &r.ref,
				&frameSeq, &conv, framePacker.col(&r.payload), optTimeCol{&created}); err != nil {
				rows.Close()
				return err
			}
			if frameSeq.Valid && created != nil {
				r.frame, r.conv, r.created = true, conv.String, *created
			}
			todo = append(todo, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		now := tx.orNow(time.Time{})
		var fresh []searchDoc
		if tx.d.name == dialectSQLite {
			var read int
			if fresh, read, err = tx.newMessages(ctx, tenantID, userID, limit); err != nil {
				return err
			}
			n = read
		}
		if err := tx.indexBatch(ctx, todo, fresh, now); err != nil {
			return err
		}
		n += len(todo)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("index search: %w", err)
	}
	return n, nil
}

// indexBatch writes the index rows of the queued changes and of the
// messages read past the mark (fresh), removes those of things that are
// gone (or, for a frame, are not a message), and takes the changes off
// the queue. The rows go in with one statement for up to
// indexRowsPerStatement of them: on SQLite the full-text index writes
// what a statement gave it when the next statement starts, so a statement
// a row made a small piece of index a row, about seven times the work of
// one piece for the batch.
func (s *Store) indexBatch(ctx context.Context, todo []queued, fresh []searchDoc, now time.Time) error {
	docs := make([]searchDoc, 0, len(todo)+len(fresh))
	for _, r := range todo {
		doc, ok, err := s.describeForSearch(ctx, r)
		if err != nil {
			return fmt.Errorf("index %s %s: %w", r.kind, r.ref, err)
		}
		if !ok {
			if _, err := s.exec(ctx, `DELETE FROM search_docs WHERE tenant_id = ? AND user_id = ? AND kind = ? AND ref = ?`,
				r.tenantID, r.userID, r.kind, r.ref); err != nil {
				return fmt.Errorf("index %s %s: %w", r.kind, r.ref, err)
			}
			continue
		}
		// The queue holds a thing once (its unique key), so no statement
		// below writes a row twice, which Postgres would refuse.
		docs = append(docs, doc)
	}
	docs = appendFresh(docs, fresh)
	for len(docs) > 0 {
		n := min(len(docs), indexRowsPerStatement)
		if err := s.upsertSearchDocs(ctx, docs[:n], now); err != nil {
			return err
		}
		docs = docs[n:]
	}
	for len(todo) > 0 {
		n := min(len(todo), indexRowsPerStatement)
		args := make([]any, n)
		for i, r := range todo[:n] {
			args[i] = r.seq
		}
		if _, err := s.exec(ctx, `DELETE FROM search_queue WHERE seq IN (?`+strings.Repeat(", ?", n-1)+`)`, args...); err != nil {
			return err
		}
		todo = todo[n:]
	}
	return nil
}

// indexRowsPerStatement bounds the rows one statement of the indexer
// writes or takes off the queue (12 parameters a row).
const indexRowsPerStatement = 100

// upsertSearchDocs writes the index rows of docs, each distinct, in one
// statement. A vector stays while the words it was made from stay, and a
// row whose words are unchanged is not written again: the full-text
// index would take its words out and put them back.
func (s *Store) upsertSearchDocs(ctx context.Context, docs []searchDoc, now time.Time) error {
	args := make([]any, 0, 12*len(docs))
	for _, d := range docs {
		args = append(args, d.tenantID, d.userID, d.kind, d.ref, d.parent, d.title, d.snippet, d.body, d.date, d.amountMinor, d.currency, s.d.ts(now))
	}
	_, err := s.exec(ctx, `INSERT INTO search_docs (tenant_id, user_id, kind, ref, parent, title, snippet, body, date, amount_minor, currency, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`+strings.Repeat(", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", len(docs)-1)+`
		ON CONFLICT (tenant_id, user_id, kind, ref) DO UPDATE SET parent = excluded.parent, title = excluded.title,
			snippet = excluded.snippet, body = excluded.body, date = excluded.date, amount_minor = excluded.amount_minor,
			currency = excluded.currency, updated_at = excluded.updated_at,
			embedding = CASE WHEN search_docs.title = excluded.title AND search_docs.snippet = excluded.snippet THEN search_docs.embedding END,
			embedding_model = CASE WHEN search_docs.title = excluded.title AND search_docs.snippet = excluded.snippet THEN search_docs.embedding_model ELSE '' END
		WHERE search_docs.parent <> excluded.parent OR search_docs.title <> excluded.title OR search_docs.snippet <> excluded.snippet
			OR search_docs.body <> excluded.body OR search_docs.date <> excluded.date OR search_docs.currency <> excluded.currency
			OR search_docs.amount_minor IS DISTINCT FROM excluded.amount_minor`,
		args...)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// describeForSearch reads the thing a queue row names and says how the
// index shows and finds it; ok is false when there is nothing to index.
func (s *Store) describeForSearch(ctx context.Context, r queued) (searchDoc, bool, error) {
	doc := searchDoc{tenantID: r.tenantID, userID: r.userID, kind: r.kind, ref: r.ref}
	var err error
	ok := false
	switch r.kind {
	case SearchEntry:
		ok, err = s.describeEntry(ctx, &doc)
	case SearchDocument:
		ok, err = s.describeDocument(ctx, &doc)
	case SearchMessage:
		ok = r.frame && messageDoc(&doc, r.conv, r.payload, r.created)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return doc, false, nil
	}
	return doc, ok, err
}

// describeEntry reads a ledger entry: found by its description, merchant
// (and the names merchantAliases gives it), category, the source
// document's file name and the year.
func (s *Store) describeEntry(ctx context.Context, doc *searchDoc) (bool, error) {
	kind, idText, _ := strings.Cut(doc.ref, "-")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return false, nil
	}
	var desc, merchant, category, date, currency, docID, filename string
	var amount int64
	switch kind {
	case LedgerExpense:
		err = s.readRow(ctx, `SELECT item, '', category, date, -amount_minor, currency, '', '' FROM expenses
			WHERE tenant_id = ? AND user_id = ? AND id = ?`, []any{doc.tenantID, doc.userID, id},
			&desc, &merchant, &category, &date, &amount, &currency, &docID, &filename)
	case LedgerTransaction:
		err = s.readRow(ctx, `SELECT t.description, t.vendor, t.category, t.date, t.amount_minor, t.currency, t.document_id, COALESCE(d.filename, '')
			FROM transactions t LEFT JOIN documents d ON d.tenant_id = t.tenant_id AND d.id = t.document_id
			WHERE t.tenant_id = ? AND t.user_id = ? AND t.id = ?`, []any{doc.tenantID, doc.userID, id},
			&desc, &merchant, &category, &date, &amount, &currency, &docID, &filename)
	default:
		return false, nil
	}
	if err != nil {
		return false, err
	}
	doc.title = desc
	if merchant != "" && !strings.EqualFold(merchant, desc) {
		doc.title = merchant
		doc.snippet = desc
	}
	if category != "" {
		doc.snippet = strings.TrimPrefix(doc.snippet+" · "+category, " · ")
	}
	doc.parent, doc.date, doc.currency, doc.amountMinor = docID, date, currency, &amount
	doc.body = searchBody(desc, merchant, category, yearOf(date), filename)
	return true, nil
}

// describeDocument reads a document: found by its file name, the domain
// it was mailed from, whether it is a receipt or a statement, and the
// words a reader took from it.
func (s *Store) describeDocument(ctx context.Context, doc *searchDoc) (bool, error) {
	var filename, sender, status, detail, reading string
	var created time.Time
	err := s.readRow(ctx, `SELECT filename, sender_domain, status, detail, reading, created_at FROM documents
		WHERE tenant_id = ? AND user_id = ? AND id = ?`, []any{doc.tenantID, doc.userID, doc.ref},
		&filename, &sender, &status, &detail, &reading, timeCol{&created})
	if err != nil {
		return false, err
	}
	what := "statement"
	if reading != "" {
		what = "receipt"
	}
	read := readingWords(reading)
	doc.title = filename
	doc.snippet = strings.Join(nonEmpty(what, sender, firstN(read, 200)), " · ")
	doc.date = created.Format(time.DateOnly)
	if d := readingDate(reading); d != "" {
		doc.date = d
	}
	doc.body = searchBody(filename, sender, what, detail, read, yearOf(doc.date))
	return true, nil
}

// messageDoc fills doc from a stored frame of conversation conv, if it is
// a message.
func messageDoc(doc *searchDoc, conv string, payload []byte, created time.Time) bool {
	who, text, ok := FrameMessage(payload)
	if !ok || conv == "" {
		return false
	}
	doc.parent = conv
	doc.title = who + ": " + firstN(text, 80)
	doc.snippet = firstN(text, 300)
	doc.date = created.Format(time.DateOnly)
	doc.body = searchBody(text)
	return true
}

// formatSeq is a frame's seq as a message's ref.
func formatSeq(seq int64) string { return strconv.FormatInt(seq, 10) }

// FrameMessage reads a stored client frame as a conversation message:
// who ("You" or "Assistant") and the text, ok false for frames that are
// not one a person reads as the conversation (tool progress, tokens,
// acks). It reads what get_chat_history reads.
func FrameMessage(payload []byte) (who, text string, ok bool) {
	var f struct {
		Type        string `json:"type"`
		UserMessage *struct {
			Text string `json:"text"`
		} `json:"user_message"`
		Answer *struct {
			Content string `json:"content"`
		} `json:"answer"`
		Clarify *struct {
			Question string `json:"question"`
		} `json:"clarify"`
	}
	if json.Unmarshal(payload, &f) != nil {
		return "", "", false
	}
	switch {
	case f.UserMessage != nil:
		return "You", f.UserMessage.Text, true
	case f.Answer != nil:
		return "Assistant", f.Answer.Content, true
	case f.Clarify != nil:
		return "Assistant", f.Clarify.Question, true
	}
	return "", "", false
}

// readingWords is every text a reader stored of a document (its JSON's
// strings), space separated.
func readingWords(reading string) string {
	if reading == "" {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(reading), &v) != nil {
		return ""
	}
	var parts []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			parts = append(parts, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return strings.Join(parts, " ")
}

// readingDate is the date a reader found on a receipt, if any.
func readingDate(reading string) string {
	var r struct {
		Date string `json:"date"`
	}
	if json.Unmarshal([]byte(reading), &r) != nil {
		return ""
	}
	if _, err := time.Parse(time.DateOnly, r.Date); err != nil {
		return ""
	}
	return r.Date
}

func yearOf(date string) string {
	if len(date) >= 4 {
		return date[:4]
	}
	return ""
}

func nonEmpty(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// firstN is s cut to at most n characters, with an ellipsis when cut.
func firstN(s string, n int) string {
	return wording.Shorten(strings.Join(strings.Fields(s), " "), n)
}

// Reindex queues everything of every person for the indexer again (what
// "purser reindex" runs), and what the index holds of things gone, so
// they leave it. It returns how many rows it queued; the indexer does the
// work (vectors are made again only where the words changed, or the
// embeddings model did).
func (s *Store) Reindex(ctx context.Context) (int64, error) {
	var total int64
	err := s.InTx(ctx, func(tx *Store) error {
		for _, q := range []string{
			`SELECT tenant_id, user_id, 'entry', 'expense-' || id FROM expenses`,
			`SELECT tenant_id, user_id, 'entry', 'transaction-' || id FROM transactions`,
			`SELECT tenant_id, user_id, 'document', id FROM documents`,
			`SELECT tenant_id, user_id, 'message', CAST(seq AS TEXT) FROM frames WHERE conversation_id <> ''`,
			// What the index holds of things gone, so they leave it.
			`SELECT tenant_id, user_id, kind, ref FROM search_docs`,
		} {
			n, err := tx.exec(ctx, `INSERT INTO search_queue (tenant_id, user_id, kind, ref) SELECT * FROM (`+q+
				`) x WHERE true ON CONFLICT (tenant_id, user_id, kind, ref) DO NOTHING`)
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reindex: %w", err)
	}
	return total, nil
}

// OptimizeSearch tidies the full-text index after a burst of writes, so
// that queries read one structure instead of many small pieces. SQLite:
// merge FTS5's segments into one (a query that found nothing in 110,000
// lines took 74 ms before, 31 ms after). Postgres: move the GIN index's
// pending list, which every query reads through in full, into the index
// (on 110,000 lines, 14,000 pending rows made a query of two rare words
// 5 ms instead of 0.2 ms); autovacuum does it too, but later. The
// indexer runs it when a burst of indexing ends; on Postgres it needs
// the index's owner, the role that ran the migrations.
func (s *Store) OptimizeSearch(ctx context.Context) error {
	q := `INSERT INTO search_fts (search_fts) VALUES ('optimize')`
	if s.d.name == dialectPostgres {
		q = `SELECT gin_clean_pending_list('search_docs_tsv'::regclass)`
	}
	if _, err := s.exec(ctx, q); err != nil {
		return fmt.Errorf("optimize search: %w", err)
	}
	return nil
}
