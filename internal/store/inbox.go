package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Notification is an entry of a user's inbox.
type Notification struct {
	TenantID  string
	UserID    string
	ID        string
	Kind      string
	Title     string
	Body      string
	Data      json.RawMessage
	CreatedAt time.Time
	ReadAt    *time.Time
}

// Frame is a client frame as delivered, kept so a client that reconnects
// can resume after the last seq it saw.
type Frame struct {
	Seq       int64
	EventID   string
	Payload   []byte
	CreatedAt time.Time
}

// AddNotification stores n; the same id again is a no-op (created false).
func (s *Store) AddNotification(ctx context.Context, n Notification) (bool, error) {
	c, err := s.exec(ctx, `INSERT INTO notifications (tenant_id, id, user_id, kind, title, body, data, created_at, read_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, id) DO NOTHING`,
		n.TenantID, n.ID, n.UserID, n.Kind, n.Title, n.Body, jsonArg(n.Data), s.d.ts(s.orNow(n.CreatedAt)), s.d.optTS(n.ReadAt))
	if err != nil {
		return false, fmt.Errorf("add notification: %w", err)
	}
	return c == 1, nil
}

// ListNotifications returns the user's notifications, newest first.
func (s *Store) ListNotifications(ctx context.Context, tenantID, userID string, unreadOnly bool, limit int) ([]Notification, error) {
	q := `SELECT id, kind, title, body, data, created_at, read_at FROM notifications WHERE tenant_id = ? AND user_id = ?`
	if unreadOnly {
		q += ` AND read_at IS NULL`
	}
	rows, err := s.query(ctx, q+` ORDER BY created_at DESC, id DESC`+limitClause(limit), tenantID, userID)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	defer rows.Close()
	var out []Notification
	for rows.Next() {
		n := Notification{TenantID: tenantID, UserID: userID}
		if err := rows.Scan(&n.ID, &n.Kind, &n.Title, &n.Body, jsonCol{&n.Data}, timeCol{&n.CreatedAt}, optTimeCol{&n.ReadAt}); err != nil {
			return nil, fmt.Errorf("list notifications: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// MarkNotificationRead marks the user's notification read (once; the first
// time is kept). ErrNotFound if the user has no such notification.
func (s *Store) MarkNotificationRead(ctx context.Context, tenantID, userID, id string, at time.Time) error {
	return s.InTx(ctx, func(tx *Store) error {
		var exists int
		err := tx.queryRow(ctx, `SELECT COUNT(*) FROM notifications WHERE tenant_id = ? AND user_id = ? AND id = ?`,
			tenantID, userID, id).Scan(&exists)
		if err != nil {
			return fmt.Errorf("mark read: %w", err)
		}
		if exists == 0 {
			return fmt.Errorf("mark read: %w", ErrNotFound)
		}
		_, err = tx.exec(ctx, `UPDATE notifications SET read_at = ? WHERE tenant_id = ? AND user_id = ? AND id = ? AND read_at IS NULL`,
			tx.d.ts(tx.orNow(at)), tenantID, userID, id)
		return err
	})
}

var errFrameExists = errors.New("frame exists")

// AppendFrame gives the frame of eventID the user's next seq and stores it.
// The same eventID again returns the seq it was first given (created
// false), so a redelivered event is republished under its first seq.
func (s *Store) AppendFrame(ctx context.Context, tenantID, userID, eventID string, payload []byte, at time.Time) (int64, bool, error) {
	return s.AppendConversationFrame(ctx, tenantID, userID, "", eventID, payload, at)
}

// AppendConversationFrame is AppendFrame for a frame of a conversation,
// which ConversationFrames then pages through. It, like AppendUserMessage,
// commits on its own; called inside a caller's transaction on Postgres,
// the counter step of a redelivered event is left for that transaction to
// undo (SQLite's frames take no counter step).
func (s *Store) AppendConversationFrame(ctx context.Context, tenantID, userID, conversationID, eventID string, payload []byte, at time.Time) (int64, bool, error) {
	f := newFrame{tenantID, userID, conversationID, eventID, payload, at}
	var seq int64
	var err error
	if s.d.name == dialectPostgres && !s.tx {
		seq, err = s.appendFrameOnce(ctx, f, nil)
	} else {
		err = s.InTx(ctx, func(tx *Store) error {
			seq, err = tx.appendFrameTx(ctx, f)
			return err
		})
	}
	return s.appended(ctx, f, seq, err)
}

// newFrame is a frame to store and what it belongs to.
type newFrame struct {
	tenantID, userID, conversationID, eventID string
	payload                                   []byte
	at                                        time.Time
}

// event is the frame's event_id: NULL without one, so that such frames
// never count as redeliveries of each other.
func (f newFrame) event() any {
	if f.eventID == "" {
		return nil
	}
	return f.eventID
}

// appended is the outcome of storing f: its new seq, or, when its event
// was stored before (errFrameExists), the seq it was first given.
func (s *Store) appended(ctx context.Context, f newFrame, seq int64, err error) (int64, bool, error) {
	if errors.Is(err, errFrameExists) {
		err = s.queryRow(ctx, `SELECT seq FROM frames WHERE tenant_id = ? AND user_id = ? AND turn_id = ? AND event_id = ?`,
			f.tenantID, f.userID, frameTurn(f.payload), f.eventID).Scan(&seq)
		if err != nil {
			return 0, false, fmt.Errorf("append frame: %w", err)
		}
		return seq, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("append frame: %w", err)
	}
	return seq, true, nil
}

// appendFrameTx gives the frame the user's next seq and stores it, inside
// tx's transaction: on SQLite in one statement (appendFrameSQLite), on
// Postgres from the counter row. errFrameExists if the event is stored
// already (roll the transaction back, and any counter step with it).
func (s *Store) appendFrameTx(ctx context.Context, f newFrame) (int64, error) {
	if s.d.name == dialectSQLite {
		return s.appendFrameSQLite(ctx, f)
	}
	seq, err := s.counter(ctx, f.tenantID, f.userID, "frame")
	if err != nil {
		return 0, err
	}
	n, err := s.exec(ctx, `INSERT INTO frames `+frameCols+` VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		f.tenantID, f.userID, seq, f.event(), blobArg(f.payload), s.d.ts(s.orNow(f.at)), f.conversationID, frameTurn(f.payload))
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, errFrameExists
	}
	return seq, nil
}

// appendFrameSQLite stores f under the user's next seq in one statement:
// the seq is one more than the user's latest frame's, found at the end of
// the frames' primary key, on the leaf the new frame goes to. SQLite has
// one writer, so no other transaction can take the same seq meanwhile;
// a user's newest frame is never deleted (PruneFrames keeps it), so a seq
// is never given twice; and a
// rolled-back frame leaves no gap. It replaces the counter row's step,
// a statement and a page of its own for every frame. A frame whose event
// was stored before stores nothing and is errFrameExists.
func (s *Store) appendFrameSQLite(ctx context.Context, f newFrame) (int64, error) {
	var seq int64
	err := s.queryRow(ctx, `INSERT INTO frames `+frameCols+`
		SELECT ?, ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ? FROM frames WHERE tenant_id = ? AND user_id = ?
		ON CONFLICT DO NOTHING RETURNING seq`,
		f.tenantID, f.userID, f.event(), s.framePayloadArg(f.payload), s.d.ts(s.orNow(f.at)), f.conversationID, frameTurn(f.payload),
		f.tenantID, f.userID).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, errFrameExists
	}
	return seq, err
}

// appendFrameOnce stores f on Postgres outside a transaction in one
// statement (a data-modifying WITH), one round trip instead of four or
// more: the counter step, the frame and, given a title, the touch of the
// conversation's title. An event stored before makes the statement fail on
// frames_turn_event, which undoes all of it, as the rolled-back transaction
// did: a redelivery burns no seq and touches nothing. That failure is
// errFrameExists.
func (s *Store) appendFrameOnce(ctx context.Context, f newFrame, title *string) (int64, error) {
	now := s.orNow(f.at)
	at := s.d.ts(now)
	q := `WITH c AS (` + counterStep + `)`
	args := []any{f.tenantID, f.userID, "frame"}
	if title != nil {
		q += `, t AS (` + touchTitle + `)`
		args = append(args, f.tenantID, f.userID, f.conversationID, *title, at, at, s.d.ts(touchedBefore(now)))
	}
	q += ` INSERT INTO frames ` + frameCols + ` SELECT ?, ?, c.value, ?, ?, ?, ?, ? FROM c RETURNING seq`
	args = append(args, f.tenantID, f.userID, f.event(), blobArg(f.payload), at, f.conversationID, frameTurn(f.payload))
	var seq int64
	err := s.writeRow(ctx, q, args, &seq)
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == pgUniqueViolation && pg.ConstraintName == "frames_turn_event" {
		return 0, errFrameExists
	}
	return seq, err
}

// frameCols are the columns a new frame is stored with.
const frameCols = `(tenant_id, user_id, seq, event_id, payload, created_at, conversation_id, turn_id)`

// pgUniqueViolation is Postgres's SQLSTATE for a duplicate key.
const pgUniqueViolation = "23505"

// AppendUserMessage stores what the user wrote as a frame of the
// conversation and touches the conversation (titling it the first time),
// in one commit. The same eventID again returns its first seq.
func (s *Store) AppendUserMessage(ctx context.Context, tenantID, userID, conversationID, eventID, title string, payload []byte, at time.Time) (int64, bool, error) {
	f := newFrame{tenantID, userID, conversationID, eventID, payload, at}
	var seq int64
	var err error
	if s.d.name == dialectPostgres && !s.tx {
		seq, err = s.appendFrameOnce(ctx, f, &title)
	} else {
		err = s.InTx(ctx, func(tx *Store) error {
			if err := tx.TouchConversation(ctx, tenantID, userID, conversationID, title, at); err != nil {
				return err
			}
			seq, err = tx.appendFrameTx(ctx, f)
			return err
		})
	}
	seq, created, err := s.appended(ctx, f, seq, err)
	if err != nil {
		return 0, false, fmt.Errorf("append user message: %w", err)
	}
	return seq, created, nil
}

// FramesAfter returns up to limit of the user's frames with seq > afterSeq, in order.
func (s *Store) FramesAfter(ctx context.Context, tenantID, userID string, afterSeq int64, limit int) ([]Frame, error) {
	rows, err := s.query(ctx, `SELECT seq, event_id, payload, created_at FROM frames
		WHERE tenant_id = ? AND user_id = ? AND seq > ? ORDER BY seq`+limitClause(limit), tenantID, userID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("frames after %d: %w", afterSeq, err)
	}
	out, err := scanFrames(rows)
	if err != nil {
		return nil, fmt.Errorf("frames after %d: %w", afterSeq, err)
	}
	return out, nil
}

// scanFrames reads rows of (seq, event_id, payload, created_at) and closes
// them.
func scanFrames(rows *sql.Rows) ([]Frame, error) {
	defer rows.Close()
	var out []Frame
	for rows.Next() {
		var f Frame
		var ev *string
		if err := rows.Scan(&f.Seq, &ev, framePacker.col(&f.Payload), timeCol{&f.CreatedAt}); err != nil {
			return nil, err
		}
		if ev != nil {
			f.EventID = *ev
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FramesOfTurn returns, in seq order, the user's latest frames (at most
// limit) of turnID: those whose payload, a JSON object, names it as its
// "turn_id".
func (s *Store) FramesOfTurn(ctx context.Context, tenantID, userID, turnID string, limit int) ([]Frame, error) {
	if turnID == "" {
		return nil, nil
	}
	var out []Frame
	err := s.readRows(ctx, framesOfTurnSQL+limitLiteral(limit),
		[]any{tenantID, userID, turnID}, func(rows rowScanner) error {
			out = out[:0]
			for rows.Next() {
				var f Frame
				if err := rows.Scan(&f.Seq, framePacker.col(&f.Payload)); err != nil {
					return err
				}
				out = append(out, f)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("frames of turn: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

// framesOfTurnSQL reads a turn's frames, newest first: frames_turn_event
// finds them and a turn has a few, sorted after. The + keeps SQLite from
// walking all of the user's frames by seq instead, for the order
// (TestHotReadsPlans).
const framesOfTurnSQL = `SELECT seq, payload FROM frames
		WHERE tenant_id = ? AND user_id = ? AND turn_id = ? ORDER BY +seq DESC`

// frameTurn is the turn a stored frame belongs to: its payload's
// "turn_id", when the payload is a JSON object naming one.
func frameTurn(payload []byte) string {
	var f struct {
		TurnID string `json:"turn_id"`
	}
	if json.Unmarshal(payload, &f) != nil {
		return ""
	}
	return f.TurnID
}

// ConversationFrames returns up to limit of the user's frames in the
// conversation with seq below beforeSeq (0: the newest), in seq order: a
// page of its history, going back.
func (s *Store) ConversationFrames(ctx context.Context, tenantID, userID, conversationID string, beforeSeq int64, limit int) ([]Frame, error) {
	if beforeSeq <= 0 {
		beforeSeq = 1<<63 - 1
	}
	rows, err := s.query(ctx, conversationFramesSQL+limitLiteral(limit), tenantID, userID, beforeSeq, conversationID)
	if err != nil {
		return nil, fmt.Errorf("conversation frames: %w", err)
	}
	out, err := scanFrames(rows)
	if err != nil {
		return nil, fmt.Errorf("conversation frames: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

// conversationFramesSQL reads a page of a conversation back from the
// user's frames by seq, newest first: on SQLite no index keeps a
// conversation's frames apart (migration 00025), so the read walks the
// user's frames of every conversation from beforeSeq down until it has
// the page (TestHotReadsPlans).
const conversationFramesSQL = `SELECT seq, event_id, payload, created_at FROM frames
		WHERE tenant_id = ? AND user_id = ? AND seq < ? AND conversation_id = ? ORDER BY seq DESC`

// ConversationTitle is one of a user's conversations, titled by its first
// words, with when it was last used.
type ConversationTitle struct {
	ConversationID string
	Title          string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// touchTitle is TouchConversation's statement: tenant_id, user_id,
// conversation_id, title, created_at, updated_at and touchedBefore(at)
// in.
const touchTitle = `INSERT INTO conversation_titles (tenant_id, user_id, conversation_id, title, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, conversation_id) DO UPDATE SET updated_at = excluded.updated_at
	WHERE conversation_titles.updated_at <= ? OR conversation_titles.updated_at < (SELECT MAX(l.updated_at)
		FROM conversation_titles l WHERE l.tenant_id = excluded.tenant_id AND l.user_id = excluded.user_id)`

// touchEvery is how far apart the last-used times of a conversation in
// use are kept: a message within a minute of the time kept leaves the row
// as it is, while the conversation is the user's latest used. Every
// message rewrote the row, a page at the user's place (a fortieth of what
// a turn wrote at 1,000 bench users), and a chat's messages come seconds
// apart. A message in any other conversation moves its time, so the list
// keeps the order of use; the time it shows for the conversation in use
// may be up to a minute old.
const touchEvery = time.Minute

// touchedBefore is the last-used time at or before which a message at at
// moves it.
func touchedBefore(at time.Time) time.Time { return at.Add(-touchEvery) }

// TouchConversation records that the user wrote in a conversation: the
// first time, with title; later, only the time, once it has moved by
// touchEvery or when another conversation was used since.
func (s *Store) TouchConversation(ctx context.Context, tenantID, userID, conversationID, title string, at time.Time) error {
	at = s.orNow(at)
	_, err := s.exec(ctx, touchTitle, tenantID, userID, conversationID, title, s.d.ts(at), s.d.ts(at), s.d.ts(touchedBefore(at)))
	if err != nil {
		return fmt.Errorf("touch conversation: %w", err)
	}
	return nil
}

// listConversationsSQL reads a user's conversations through the primary
// key's prefix and sorts them: no index keeps them by time, since every
// turn moves its conversation's (TestHotReadsPlans).
const listConversationsSQL = `SELECT conversation_id, title, created_at, updated_at FROM conversation_titles
		WHERE tenant_id = ? AND user_id = ? ORDER BY updated_at DESC, conversation_id`

// ListConversations returns the user's conversations, the most recently
// used first.
func (s *Store) ListConversations(ctx context.Context, tenantID, userID string, limit int) ([]ConversationTitle, error) {
	rows, err := s.query(ctx, listConversationsSQL+limitLiteral(limit), tenantID, userID)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	defer rows.Close()
	var out []ConversationTitle
	for rows.Next() {
		var c ConversationTitle
		if err := rows.Scan(&c.ConversationID, &c.Title, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt}); err != nil {
			return nil, fmt.Errorf("list conversations: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
