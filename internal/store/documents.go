package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Document statuses.
const (
	DocumentQueued   = "queued"
	DocumentImported = "imported"
	DocumentFailed   = "failed"
)

// Document is a stored attachment and the state of its import.
type Document struct {
	TenantID        string
	ID              string
	UserID          string
	SHA256          string
	Filename        string
	MediaType       string
	SourceMessageID string
	// SenderDomain is the domain of the message's From address, lower case.
	SenderDomain string
	Size         int64
	Content      []byte
	Status       string
	Detail       string
	Imported     int
	// Reading is what a reader made of the file, as JSON (a receipt's
	// fields and line items); empty for statements.
	Reading   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

const documentCols = `id, user_id, sha256, filename, media_type, source_message_id, sender_domain, size, content, status, detail, imported, reading, created_at, updated_at`

func documentDest(d *Document) []any {
	return []any{&d.ID, &d.UserID, &d.SHA256, &d.Filename, &d.MediaType, &d.SourceMessageID, &d.SenderDomain, &d.Size, &d.Content,
		&d.Status, &d.Detail, &d.Imported, &d.Reading, timeCol{&d.CreatedAt}, timeCol{&d.UpdatedAt}}
}

func scanDocument(tenantID string, sc interface{ Scan(...any) error }) (Document, error) {
	d := Document{TenantID: tenantID}
	err := sc.Scan(documentDest(&d)...)
	return d, err
}

// PutDocument stores d unless the user already has a document with the same
// SHA256 (or the tenant one with the same id); then it returns that one
// with created false.
func (s *Store) PutDocument(ctx context.Context, d Document) (Document, bool, error) {
	d.CreatedAt = s.orNow(d.CreatedAt)
	d.UpdatedAt = d.CreatedAt
	if d.Status == "" {
		d.Status = DocumentQueued
	}
	var created bool
	err := s.InTx(ctx, func(tx *Store) error {
		n, err := tx.exec(ctx, `INSERT INTO documents (tenant_id, `+documentCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, d.TenantID, d.ID, d.UserID, d.SHA256, d.Filename, d.MediaType, d.SourceMessageID,
			strings.ToLower(d.SenderDomain), d.Size, blobArg(d.Content), d.Status, d.Detail, d.Imported, d.Reading, tx.d.ts(d.CreatedAt), tx.d.ts(d.UpdatedAt))
		if err != nil {
			return err
		}
		if created = n == 1; created {
			return nil
		}
		d, err = scanDocument(d.TenantID, tx.queryRow(ctx, `SELECT `+documentCols+` FROM documents
			WHERE tenant_id = ? AND ((user_id = ? AND sha256 = ?) OR id = ?)`, d.TenantID, d.UserID, d.SHA256, d.ID))
		return err
	})
	if err != nil {
		return Document{}, false, fmt.Errorf("put document: %w", err)
	}
	return d, created, nil
}

// GetDocument returns the tenant's document, or ErrNotFound.
func (s *Store) GetDocument(ctx context.Context, tenantID, id string) (Document, error) {
	d, err := scanDocument(tenantID, s.queryRow(ctx, `SELECT `+documentCols+` FROM documents WHERE tenant_id = ? AND id = ?`, tenantID, id))
	if err != nil {
		return Document{}, fmt.Errorf("get document: %w", notFound(err))
	}
	return d, nil
}

// UpdateDocumentStatus records the outcome of an import.
func (s *Store) UpdateDocumentStatus(ctx context.Context, tenantID, id, status, detail string, imported int, at time.Time) error {
	n, err := s.exec(ctx, `UPDATE documents SET status = ?, detail = ?, imported = ?, updated_at = ? WHERE tenant_id = ? AND id = ?`,
		status, detail, imported, s.d.ts(s.orNow(at)), tenantID, id)
	if err != nil {
		return fmt.Errorf("update document: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("update document: %w", ErrNotFound)
	}
	return nil
}

// RecentDocuments returns the user's latest documents, newest first,
// without their content.
func (s *Store) RecentDocuments(ctx context.Context, tenantID, userID string, limit int) ([]Document, error) {
	cols := strings.Replace(documentCols, "content", "NULL", 1)
	rows, err := s.query(ctx, `SELECT `+cols+` FROM documents WHERE tenant_id = ? AND user_id = ? ORDER BY created_at DESC, id DESC`+limitClause(limit), tenantID, userID)
	if err != nil {
		return nil, fmt.Errorf("recent documents: %w", err)
	}
	defer rows.Close()
	var out []Document
	for rows.Next() {
		d, err := scanDocument(tenantID, rows)
		if err != nil {
			return nil, fmt.Errorf("recent documents: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func toLower(s string) string { return strings.ToLower(s) }

// QueuedDocuments returns documents of any tenant still queued for import
// and created before cutoff, oldest first, without their content: imports
// whose job was lost and must be started again.
func (s *Store) QueuedDocuments(ctx context.Context, cutoff time.Time, limit int) ([]Document, error) {
	cols := strings.Replace(documentCols, "content", "NULL", 1)
	rows, err := s.query(ctx, `SELECT tenant_id, `+cols+` FROM documents WHERE status = ? AND created_at < ? ORDER BY created_at, id`+limitClause(limit), DocumentQueued, s.d.ts(cutoff))
	if err != nil {
		return nil, fmt.Errorf("queued documents: %w", err)
	}
	defer rows.Close()
	var out []Document
	for rows.Next() {
		var tenant string
		d := Document{}
		if err := rows.Scan(append([]any{&tenant}, documentDest(&d)...)...); err != nil {
			return nil, fmt.Errorf("queued documents: %w", err)
		}
		d.TenantID = tenant
		out = append(out, d)
	}
	return out, rows.Err()
}

// KnownSenderDomain reports whether the user has any document from the
// e-mail domain (compared in lower case).
func (s *Store) KnownSenderDomain(ctx context.Context, tenantID, userID, domain string) (bool, error) {
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM documents WHERE tenant_id = ? AND user_id = ? AND sender_domain = ?`,
		tenantID, userID, strings.ToLower(domain)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("known sender: %w", err)
	}
	return n > 0, nil
}

// ForgetDocumentFiles drops the file of every document created before
// cutoff that is no longer waiting to be imported, keeping the record
// (name, digest, size, status, what was read): the file retention. It
// returns how many files it dropped. A document deleted (an undone
// import) takes its file with it at once.
func (s *Store) ForgetDocumentFiles(ctx context.Context, cutoff, now time.Time) (int64, error) {
	n, err := s.exec(ctx, `UPDATE documents SET content = ?, updated_at = ? WHERE created_at < ? AND status <> ? AND length(content) > 0`,
		[]byte{}, s.d.ts(now), s.d.ts(cutoff), DocumentQueued)
	if err != nil {
		return 0, fmt.Errorf("forget document files: %w", err)
	}
	return n, nil
}
