package toolrunner

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"path/filepath"
	"strings"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/uploads"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Mail reads a user's mailbox. It is read-only by construction: nothing in
// purser can send, forward or delete mail.
type Mail interface {
	// Search returns the messages that best match query within days,
	// best first, at most limit.
	Search(ctx context.Context, tenant, user, query string, days, limit int, now time.Time) ([]contracts.MailSummary, error)
	// Fetch returns a message's subject and attachments.
	Fetch(ctx context.Context, tenant, user, messageID string) (Fetched, error)
}

// Fetched is one message's sender, subject and attachments.
type Fetched struct {
	From    string
	Subject string
	Files   []File
}

// File is one attachment.
type File struct {
	Name      string
	MediaType string
	Data      []byte
}

// ErrNoMessage is returned by Mail.Fetch for an id the user does not have.
var ErrNoMessage = errors.New("no such message")

// statementExt are the attachment types the importer reads.
var statementExt = map[string]bool{".csv": true, ".tsv": true, ".txt": true, ".ofx": true, ".qfx": true, ".xml": true, ".sta": true,
	".940": true, ".mt940": true, ".qif": true, ".pdf": true, ".png": true, ".jpg": true, ".jpeg": true, ".tif": true, ".tiff": true}

// notStatementExt are text attachments mail carries that are never
// statements: pages, invitations, cards, signatures.
var notStatementExt = map[string]bool{".html": true, ".htm": true, ".ics": true, ".vcf": true, ".eml": true, ".json": true,
	".js": true, ".css": true, ".svg": true, ".rtf": true, ".md": true, ".asc": true, ".sig": true, ".p7s": true}

// Previewer reads a statement attachment before the user's yes, so that
// the import's proposal can say what it would store.
type Previewer struct {
	Parser Parser
	// Hints gives a user's defaults for reading a statement; nil gives none.
	Hints func(ctx context.Context, tenantID, userID string) ParseHints
}

// previewMessages is how many of a search's best messages are previewed.
const previewMessages = 3

// preview parses one attachment (in the parser's sandbox) and says what
// importing it would store, or why it cannot be read.
func (p *Previewer) preview(ctx context.Context, tenant, user string, f File) string {
	st, unreadable := p.read(ctx, tenant, user, f)
	if unreadable != "" {
		return unreadable
	}
	return Preview(f.Name, st)
}

// read parses one attachment (in the parser's sandbox); unreadable says
// why it cannot be read, empty when it was.
func (p *Previewer) read(ctx context.Context, tenant, user string, f File) (_ Statement, unreadable string) {
	var st Statement
	var err error
	if hp, ok := p.Parser.(HintedParser); ok && p.Hints != nil {
		st, err = hp.ParseWithHints(ctx, f.Name, f.Data, p.Hints(ctx, tenant, user))
	} else {
		st, err = p.Parser.Parse(ctx, f.Name, f.Data)
	}
	var ie *ImportError
	switch {
	case errors.As(err, &ie):
		return st, f.Name + ": cannot be read (" + ie.Reason + ")"
	case err != nil:
		return st, f.Name + ": could not be read now"
	}
	return st, ""
}

// MailTools are search_gmail, fetch_email_attachments, get_recent_imports
// and preview_import over m. With a previewer, the best messages of a
// search carry a preview of each statement attached.
func MailTools(m Mail, pv *Previewer) []Tool {
	const outputCap = 64 << 10
	return []Tool{
		{Name: contracts.ToolSearchGmail, Kind: contracts.KindRead, Deadline: 20 * time.Second, OutputCap: outputCap, PerMinute: 20,
			Run: func(ctx context.Context, tx Tx, c Call) (Output, error) { return searchMail(ctx, m, pv, tx, c) }},
		{Name: contracts.ToolFetchEmailAttachments, Kind: contracts.KindMutation, Deadline: 60 * time.Second, OutputCap: outputCap, PerMinute: 10,
			Run: func(ctx context.Context, tx Tx, c Call) (Output, error) { return fetchAttachments(ctx, m, tx, c) }},
		{Name: contracts.ToolGetRecentImports, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60,
			Run: recentImports},
		{Name: contracts.ToolPreviewImport, Kind: contracts.KindRead, Deadline: 60 * time.Second, OutputCap: outputCap, PerMinute: 20,
			Run: func(ctx context.Context, tx Tx, c Call) (Output, error) { return previewImport(ctx, m, pv, tx, c) }},
	}
}

func searchMail(ctx context.Context, m Mail, pv *Previewer, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.SearchGmailArgs)
	days, limit := 90, 5
	if a.Days != nil {
		days = *a.Days
	}
	if a.Limit != nil {
		limit = *a.Limit
	}
	found, err := m.Search(ctx, c.Caller.TenantID, c.Caller.UserID, a.Query, days, limit, c.Now)
	if err != nil {
		return Output{}, fmt.Errorf("search mail: %w", err)
	}
	if found == nil {
		found = []contracts.MailSummary{}
	}
	for i := range found {
		found[i].From, found[i].Subject = contracts.PlainText(found[i].From), contracts.PlainText(found[i].Subject)
		if len(found[i].Attachments) > 0 {
			names := make([]string, len(found[i].Attachments))
			for j, n := range found[i].Attachments {
				names[j] = fileName(n)
			}
			found[i].Attachments = names
		}
		domain := SenderDomain(found[i].From)
		known, err := tx.KnownSenderDomain(ctx, c.Caller.TenantID, c.Caller.UserID, domain)
		if err != nil {
			return Output{}, err
		}
		found[i].NewSender = !known
		if pv != nil && i < previewMessages && hasStatement(found[i].Attachments) {
			msg, err := fetchPlain(ctx, m, c.Caller.TenantID, c.Caller.UserID, found[i].ID)
			if err != nil {
				continue // the search stands without the preview
			}
			for _, f := range msg.Files {
				if isStatementFile(f) {
					found[i].Previews = append(found[i].Previews, pv.previewFile(ctx, tx, c.Caller.TenantID, c.Caller.UserID, f).Summary)
				}
			}
		}
	}
	total := int64(len(found))
	return Output{Data: contracts.MailSearch{Messages: found}, Total: &total}, nil
}

// DocumentID names a user's copy of a file (contracts.DocumentID).
func DocumentID(tenant, user string, data []byte) (id, sum string) {
	return contracts.DocumentID(tenant, user, data)
}

func fetchAttachments(ctx context.Context, m Mail, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.FetchEmailAttachmentsArgs)
	msg, err := fetchPlain(ctx, m, c.Caller.TenantID, c.Caller.UserID, a.MessageID)
	if errors.Is(err, ErrNoMessage) {
		return Output{}, fail(contracts.CodeNotFound, "There is no message with that id in your mailbox.")
	} else if err != nil {
		return Output{}, fmt.Errorf("fetch mail: %w", err)
	}
	out := contracts.AttachmentsFetched{MessageID: a.MessageID, Subject: msg.Subject, Documents: []contracts.QueuedDocument{}}
	var jobs []contracts.ImportJob
	for _, f := range msg.Files {
		if !isStatementFile(f) {
			out.Documents = append(out.Documents, contracts.QueuedDocument{Filename: f.Name, Status: "skipped"})
			continue
		}
		id, sum := DocumentID(c.Caller.TenantID, c.Caller.UserID, f.Data)
		id, err := importAgainID(ctx, tx, c.Caller.TenantID, c.Caller.UserID, id)
		if err != nil {
			return Output{}, err
		}
		d, created, err := tx.PutDocument(ctx, store.Document{TenantID: c.Caller.TenantID, ID: id, UserID: c.Caller.UserID, SHA256: sum,
			Filename: f.Name, MediaType: f.MediaType, SourceMessageID: a.MessageID, SenderDomain: SenderDomain(msg.From),
			Size: int64(len(f.Data)), Content: f.Data,
			Status: store.DocumentQueued, CreatedAt: c.Now})
		if err != nil {
			return Output{}, err
		}
		if !created {
			out.Documents = append(out.Documents, contracts.QueuedDocument{Filename: f.Name, Status: "duplicate"})
			continue
		}
		out.Documents = append(out.Documents, contracts.QueuedDocument{Filename: f.Name, Status: "queued"})
		jobs = append(jobs, contracts.ImportJob{TenantID: d.TenantID, UserID: d.UserID, DocumentID: d.ID})
	}
	if len(jobs) == 0 && len(out.Documents) > 0 && !hasStatus(out.Documents, "duplicate") {
		return Output{}, fail(contracts.CodeInvalidArgs, "That message has no statement attachment (CSV, OFX/QFX, camt.053, MT940, QIF, PDF or a scan).")
	}
	if len(out.Documents) == 0 {
		return Output{}, fail(contracts.CodeInvalidArgs, "That message has no attachments.")
	}
	return Output{Data: out, Jobs: jobs}, nil
}

// fetchPlain is m.Fetch with the sender, subject and file names made
// contracts.PlainText: whoever sent the mail chose them, and from here on
// they are data that holds no control, bidi or invisible character. What
// m returned is copied, never changed.
func fetchPlain(ctx context.Context, m Mail, tenant, user, id string) (Fetched, error) {
	msg, err := m.Fetch(ctx, tenant, user, id)
	if err != nil {
		return msg, err
	}
	msg.From, msg.Subject = contracts.PlainText(msg.From), contracts.PlainText(msg.Subject)
	files := make([]File, len(msg.Files))
	for i, f := range msg.Files {
		f.Name = fileName(f.Name)
		files[i] = f
	}
	msg.Files = files
	return msg, nil
}

// fileName is an attachment's name as contracts.PlainText, or
// "attachment" when nothing visible is left of it.
func fileName(name string) string {
	if n := contracts.PlainText(name); n != "" {
		return n
	}
	return "attachment"
}

// isStatementFile says an attachment may be a statement: its name says
// so, or, whatever its name (banks name exports "export.dat", "download"
// or "camt053.053"), its content is a PDF or text. Images are taken by
// their names only: mail carries logos and signatures.
func isStatementFile(f File) bool {
	ext := strings.ToLower(filepath.Ext(f.Name))
	if statementExt[ext] {
		return true
	}
	if notStatementExt[ext] {
		return false
	}
	kind, _, err := uploads.Sniff(f.Data)
	return err == nil && kind != uploads.KindImage
}

func hasStatement(names []string) bool {
	for _, n := range names {
		if statementExt[strings.ToLower(filepath.Ext(n))] {
			return true
		}
	}
	return false
}

func hasStatus(docs []contracts.QueuedDocument, status string) bool {
	for _, d := range docs {
		if d.Status == status {
			return true
		}
	}
	return false
}

func recentImports(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.GetRecentImportsArgs)
	days, limit := 30, 5
	if a.Days != nil {
		days = *a.Days
	}
	if a.Limit != nil {
		limit = *a.Limit
	}
	docs, err := tx.RecentDocuments(ctx, c.Caller.TenantID, c.Caller.UserID, limit)
	if err != nil {
		return Output{}, err
	}
	since := c.Now.AddDate(0, 0, -days)
	out := contracts.RecentImports{Imports: []contracts.ImportSummary{}}
	for _, d := range docs {
		if d.CreatedAt.Before(since) {
			continue
		}
		out.Imports = append(out.Imports, contracts.ImportSummary{Filename: contracts.PlainText(d.Filename), Status: d.Status, Imported: d.Imported,
			Detail: contracts.PlainText(d.Detail), CreatedAt: d.CreatedAt})
	}
	return Output{Data: out}, nil
}

// SenderDomain is the lower-case domain of a From header ("Bank
// <alerts@mail.bank.example>" gives "mail.bank.example"), or "" when it
// has none.
func SenderDomain(from string) string {
	addr := from
	if a, err := mail.ParseAddress(from); err == nil {
		addr = a.Address
	} else if i, j := strings.LastIndexByte(from, '<'), strings.LastIndexByte(from, '>'); i >= 0 && j > i {
		addr = from[i+1 : j]
	}
	at := strings.LastIndexByte(addr, '@')
	if at < 0 {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(addr[at+1:]))
}
