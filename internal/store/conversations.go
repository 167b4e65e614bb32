package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Conversation is the orchestrator's durable state for one conversation:
// a user's own, under an id their client chose. Two users of a tenant may
// use the same id; each then has a conversation of their own. Version is
// the optimistic-concurrency token: 0 means "not stored yet".
type Conversation struct {
	TenantID       string
	UserID         string
	ConversationID string
	Version        int64
	State          json.RawMessage
	UpdatedAt      time.Time
	// DeadlineAt is when the running turn runs out of time (nil: no turn
	// runs); DueConversations finds those past it.
	DeadlineAt *time.Time
}

// OutboxMessage is a message written in the same transaction as the state
// change that produced it, published afterwards by the outbox relay. ID is
// the message's Nats-Msg-Id; writing the same ID twice keeps the first.
type OutboxMessage struct {
	ID          string
	Subject     string
	Headers     map[string]string
	Payload     []byte
	CreatedAt   time.Time
	PublishedAt *time.Time
}

// LoadConversation returns the user's stored conversation, or ErrNotFound:
// another user's conversation of the same id is not theirs, and not found.
func (s *Store) LoadConversation(ctx context.Context, tenantID, userID, conversationID string) (Conversation, error) {
	c := Conversation{TenantID: tenantID, UserID: userID, ConversationID: conversationID}
	err := s.readRow(ctx, `SELECT version, state, updated_at, deadline_at FROM conversations
		WHERE tenant_id = ? AND user_id = ? AND conversation_id = ?`, []any{tenantID, userID, conversationID},
		&c.Version, statePacker.col((*[]byte)(&c.State)), timeCol{&c.UpdatedAt}, optTimeCol{&c.DeadlineAt})
	if err != nil {
		return Conversation{}, fmt.Errorf("load conversation: %w", notFound(err))
	}
	return c, nil
}

// LoadConversationIfChanged is LoadConversation and the user's settings
// (empty ones if they set nothing), in one read: what the orchestrator
// needs for every event of a conversation. A caller that holds the
// conversation's state as of version known gets the state neither read
// nor unpacked (c.State nil) while the stored version is still known. A
// version is never stored twice for a conversation (each save adds one,
// and conversations are never deleted), so the caller's copy is the
// stored state. known 0 reads it always. A conversation not stored
// returns ErrNotFound and no settings.
func (s *Store) LoadConversationIfChanged(ctx context.Context, tenantID, userID, conversationID string, known int64) (Conversation, UserSettings, error) {
	c := Conversation{TenantID: tenantID, UserID: userID, ConversationID: conversationID}
	var u UserSettings
	var currency, zone, order, language *string
	var setAt *time.Time
	err := s.readRow(ctx, `SELECT c.version, CASE WHEN c.version = ? THEN NULL ELSE c.state END, c.updated_at, c.deadline_at,
			u.currency, u.timezone, u.date_order, u.language, u.updated_at
		FROM conversations c LEFT JOIN user_settings u ON u.tenant_id = c.tenant_id AND u.user_id = c.user_id
		WHERE c.tenant_id = ? AND c.user_id = ? AND c.conversation_id = ?`, []any{known, tenantID, userID, conversationID},
		&c.Version, statePacker.col((*[]byte)(&c.State)), timeCol{&c.UpdatedAt}, optTimeCol{&c.DeadlineAt},
		&currency, &zone, &order, &language, optTimeCol{&setAt})
	if err != nil {
		return Conversation{}, UserSettings{}, fmt.Errorf("load conversation: %w", notFound(err))
	}
	u.TenantID, u.UserID = tenantID, userID
	if setAt != nil { // the user has settings
		u.Currency, u.Timezone, u.DateOrder, u.Language, u.UpdatedAt = *currency, *zone, *order, *language, *setAt
	}
	return c, u, nil
}

// ConversationUsers returns up to limit users of the tenant who have a
// conversation of this id, in no promised order. It serves messages that
// name a conversation but not its user (tool results published before
// conversations were per user): one user is the conversation's owner,
// several leave the message ambiguous.
func (s *Store) ConversationUsers(ctx context.Context, tenantID, conversationID string, limit int) ([]string, error) {
	rows, err := s.query(ctx, `SELECT user_id FROM conversations WHERE tenant_id = ? AND conversation_id = ?`+limitClause(limit),
		tenantID, conversationID)
	if err != nil {
		return nil, fmt.Errorf("conversation users: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("conversation users: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// SaveConversation writes c, the conversation of c.UserID, if its stored
// version is still expectedVersion (0: it must not exist yet) and appends
// out to the outbox, in one transaction. It returns the new version; a
// lost race returns ErrConflict and writes nothing.
func (s *Store) SaveConversation(ctx context.Context, c Conversation, expectedVersion int64, out []OutboxMessage) (int64, error) {
	if c.TenantID == "" || c.UserID == "" || c.ConversationID == "" {
		return 0, errors.New("save conversation: tenant, user and id are required")
	}
	next := expectedVersion + 1
	at := s.orNow(c.UpdatedAt)
	if s.d.name == dialectPostgres && !s.tx && len(out) <= outboxRowsPerStatement {
		if err := s.saveConversationOnce(ctx, c, expectedVersion, at, out); err != nil {
			return 0, fmt.Errorf("save conversation %s: %w", c.ConversationID, err)
		}
		return next, nil
	}
	err := s.InTx(ctx, func(tx *Store) error {
		q, args := tx.conversationWrite(c, expectedVersion, at)
		n, err := tx.exec(ctx, q, args...)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrConflict
		}
		return tx.AppendOutbox(ctx, out)
	})
	if err != nil {
		return 0, fmt.Errorf("save conversation %s: %w", c.ConversationID, err)
	}
	return next, nil
}

// saveConversationOnce is SaveConversation on Postgres outside a
// transaction: the versioned write and the outbox rows in one statement,
// one round trip instead of four (BEGIN, conversation, outbox, COMMIT).
// The rows go in only if the conversation was written; one statement is
// one transaction, so either both are stored or neither.
func (s *Store) saveConversationOnce(ctx context.Context, c Conversation, expectedVersion int64, at time.Time, out []OutboxMessage) error {
	var q strings.Builder
	write, args := s.conversationWrite(c, expectedVersion, at)
	q.WriteString(`WITH c AS (` + write + ` RETURNING 1)`)
	if len(out) > 0 {
		rows, err := s.outboxArgs(out)
		if err != nil {
			return err
		}
		// Typed: a parameter in a VALUES list has no column to take its
		// type from. The rows keep their order in seq, as in AppendOutbox.
		q.WriteString(`, o AS (INSERT INTO outbox (id, subject, headers, payload, created_at)
			SELECT * FROM (VALUES `)
		for i := range out {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(CAST(? AS text), CAST(? AS text), CAST(? AS text), CAST(? AS bytea), CAST(? AS timestamptz))")
		}
		q.WriteString(`) AS v WHERE EXISTS (SELECT 1 FROM c) ON CONFLICT (id) WHERE published_at IS NULL DO NOTHING)`)
		args = append(args, rows...)
	}
	q.WriteString(` SELECT COUNT(*) FROM c`)
	var n int
	if err := s.writeRow(ctx, q.String(), args, &n); err != nil {
		return err
	}
	if n == 0 {
		return ErrConflict
	}
	return nil
}

// conversationWrite is the statement that stores c if its stored version
// is still expectedVersion (0: it must not exist yet), touching no row
// otherwise, and its arguments.
func (s *Store) conversationWrite(c Conversation, expectedVersion int64, at time.Time) (string, []any) {
	if expectedVersion == 0 {
		return `INSERT INTO conversations (tenant_id, user_id, conversation_id, version, state, updated_at, deadline_at)
			VALUES (?, ?, ?, 1, ?, ?, ?) ON CONFLICT (tenant_id, user_id, conversation_id) DO NOTHING`,
			[]any{c.TenantID, c.UserID, c.ConversationID, s.stateArg(c.State), s.d.ts(at), s.d.optTS(c.DeadlineAt)}
	}
	return `UPDATE conversations SET version = ?, state = ?, updated_at = ?, deadline_at = ?
			WHERE tenant_id = ? AND user_id = ? AND conversation_id = ? AND version = ?`,
		[]any{expectedVersion + 1, s.stateArg(c.State), s.d.ts(at), s.d.optTS(c.DeadlineAt), c.TenantID, c.UserID, c.ConversationID, expectedVersion}
}

// DueConversations returns, oldest deadline first, conversations of any
// tenant and user whose running turn's deadline is before now (state not
// loaded).
func (s *Store) DueConversations(ctx context.Context, now time.Time, limit int) ([]Conversation, error) {
	rows, err := s.query(ctx, `SELECT tenant_id, conversation_id, user_id, version, deadline_at FROM conversations
		WHERE deadline_at IS NOT NULL AND deadline_at < ? ORDER BY deadline_at`+limitClause(limit), s.d.ts(now))
	if err != nil {
		return nil, fmt.Errorf("due conversations: %w", err)
	}
	defer rows.Close()
	var out []Conversation
	for rows.Next() {
		var c Conversation
		if err := rows.Scan(&c.TenantID, &c.ConversationID, &c.UserID, &c.Version, optTimeCol{&c.DeadlineAt}); err != nil {
			return nil, fmt.Errorf("due conversations: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// AppendOutbox stores messages to publish, with one statement for up to
// fifty. A message whose ID waits in the outbox to be published is left as
// it is, so a replayed transition cannot queue a message twice; one stored
// again after it was published is published again, under the same id,
// for JetStream (within its duplicate window) and the idempotent consumers
// to drop.
func (s *Store) AppendOutbox(ctx context.Context, out []OutboxMessage) error {
	if len(out) == 0 {
		return nil
	}
	return s.InTx(ctx, func(tx *Store) error {
		for len(out) > 0 {
			n := min(len(out), outboxRowsPerStatement)
			args, err := tx.outboxArgs(out[:n])
			if err != nil {
				return err
			}
			// Rows in one statement keep their order in seq.
			if _, err := tx.exec(ctx, `INSERT INTO outbox (id, subject, headers, payload, created_at) VALUES (?, ?, ?, ?, ?)`+
				strings.Repeat(", (?, ?, ?, ?, ?)", n-1)+` ON CONFLICT (id) WHERE published_at IS NULL DO NOTHING`, args...); err != nil {
				return fmt.Errorf("append outbox: %w", err)
			}
			out = out[n:]
		}
		return nil
	})
}

// outboxRowsPerStatement bounds the rows one INSERT takes.
const outboxRowsPerStatement = 50

// outboxArgs are the parameters of out's rows, five a row: id, subject,
// headers, payload, created_at; on SQLite the headers and payload packed
// in the payload (outboxpack.go).
func (s *Store) outboxArgs(out []OutboxMessage) ([]any, error) {
	args := make([]any, 0, 5*len(out))
	for _, m := range out {
		if m.ID == "" || m.Subject == "" {
			return nil, errors.New("append outbox: message without id or subject")
		}
		var headers json.RawMessage
		if len(m.Headers) > 0 {
			b, err := encodeHeaders(m.Headers)
			if err != nil {
				return nil, fmt.Errorf("append outbox: %w", err)
			}
			headers = b
		}
		if s.d.name == dialectSQLite {
			args = append(args, m.ID, m.Subject, outboxPacked, packOutbox(headers, m.Payload), s.d.ts(s.orNow(m.CreatedAt)))
			continue
		}
		args = append(args, m.ID, m.Subject, jsonArg(headers), blobArg(m.Payload), s.d.ts(s.orNow(m.CreatedAt)))
	}
	return args, nil
}

// encodeHeaders is json.Marshal(h), the same bytes, written directly
// when every key and value is printable ASCII that JSON writes as it is
// (a message's headers are ids, names and times): json.Marshal sorts and
// escapes through reflection, for each of the messages a turn stores.
// Anything else goes to json.Marshal.
func encodeHeaders(h map[string]string) ([]byte, error) {
	var keys [16]string
	if len(h) > len(keys) {
		return json.Marshal(h)
	}
	ks, size := keys[:0], 2
	for k, v := range h {
		if !plainJSON(k) || !plainJSON(v) {
			return json.Marshal(h)
		}
		ks = append(ks, k)
		size += len(k) + len(v) + 6
	}
	slices.Sort(ks)
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, k := range ks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':', '"')
		b = append(b, h[k]...)
		b = append(b, '"')
	}
	return append(b, '}'), nil
}

// plainJSON reports whether json.Marshal writes s between quotes as it
// is: printable ASCII but the quote, the backslash and the three it
// escapes for HTML (<, > and &).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// PendingOutbox returns up to limit unpublished messages, oldest first.
func (s *Store) PendingOutbox(ctx context.Context, limit int) ([]OutboxMessage, error) {
	rows, err := s.query(ctx, pendingOutboxSQL+limitClause(limit))
	if err != nil {
		return nil, fmt.Errorf("pending outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxMessage
	for rows.Next() {
		var m OutboxMessage
		var headers json.RawMessage
		if err := rows.Scan(&m.ID, &m.Subject, jsonCol{&headers}, &m.Payload, timeCol{&m.CreatedAt}); err != nil {
			return nil, fmt.Errorf("pending outbox: %w", err)
		}
		if string(headers) == outboxPacked {
			var err error
			if headers, m.Payload, err = unpackOutbox(m.Payload); err != nil {
				return nil, fmt.Errorf("pending outbox %s: %w", m.ID, err)
			}
		}
		if len(headers) > 0 {
			if err := json.Unmarshal(headers, &m.Headers); err != nil {
				return nil, fmt.Errorf("pending outbox %s: headers: %w", m.ID, err)
			}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// pendingOutboxSQL reads the unpublished messages in the order they were
// stored, through the partial index outbox_pending (TestHotReadsPlans).
const pendingOutboxSQL = `SELECT id, subject, headers, payload, created_at FROM outbox
		WHERE published_at IS NULL ORDER BY seq`

// MarkPublished records that the messages were published, with one
// statement per hundred ids. Marking an already published message again
// keeps its first time.
func (s *Store) MarkPublished(ctx context.Context, ids []string, at time.Time) error {
	return s.InTx(ctx, func(tx *Store) error {
		for len(ids) > 0 {
			n := min(len(ids), 100)
			args := make([]any, 0, n+1)
			args = append(args, tx.d.ts(tx.orNow(at)))
			for _, id := range ids[:n] {
				args = append(args, id)
			}
			if _, err := tx.exec(ctx, `UPDATE outbox SET published_at = ? WHERE published_at IS NULL AND id IN (?`+
				strings.Repeat(", ?", n-1)+`)`, args...); err != nil {
				return fmt.Errorf("mark published: %w", err)
			}
			ids = ids[n:]
		}
		return nil
	})
}

// PruneOutbox deletes messages published before cutoff and returns how
// many. It works from the oldest rows, a thousand at a time (each its own
// short write), and stops at a thousand oldest rows holding none to
// delete: messages are published in about the order they are stored, so
// the rest are younger, and no pass reads the whole table.
func (s *Store) PruneOutbox(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for {
		n, err := s.exec(ctx, `DELETE FROM outbox WHERE seq IN (SELECT seq FROM
			(SELECT seq, published_at FROM outbox ORDER BY seq LIMIT 1000) AS oldest
			WHERE published_at IS NOT NULL AND published_at < ?)`, s.d.ts(cutoff))
		if err != nil {
			return total, fmt.Errorf("prune outbox: %w", err)
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}
