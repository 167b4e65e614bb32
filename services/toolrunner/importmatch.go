package toolrunner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
)

// matchDetail says, after an import's own detail, which new lines were
// linked to an expense typed by hand, which only might be (and were not
// linked), and how many were transfers between the person's accounts.
// Empty when there is none of these.
func matchDetail(res store.ImportOutcome, lines []store.Transaction) string {
	var parts []string
	if n := len(res.Linked); n > 0 {
		parts = append(parts, fmt.Sprintf("%d linked to what you typed (%s)", n, strings.Join(matchWords(res.Linked, lines), "; ")))
	}
	if n := len(res.Doubtful); n > 0 {
		parts = append(parts, fmt.Sprintf("%d kept apart though it may be what you typed (%s)", n, strings.Join(matchWords(res.Doubtful, lines), "; ")))
	}
	if res.Transfers > 0 {
		parts = append(parts, fmt.Sprintf("%d transfer%s between your accounts", res.Transfers, wording.Plural(res.Transfers)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// matchWords shows each match as the bank's line and the expense typed
// by hand, each with its description, amount and date.
func matchWords(ms []store.ImportMatch, lines []store.Transaction) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if m.Line < 0 || m.Line >= len(lines) {
			continue
		}
		l, e := lines[m.Line], m.Expense
		out = append(out, fmt.Sprintf("'%s' %s on %s and your '%s' %s on %s",
			contracts.PlainText(l.Description), FormatMinor(l.AmountMinor, l.Currency), l.Date,
			contracts.PlainText(e.Item), FormatMinor(-e.AmountMinor, e.Currency), e.Date))
	}
	return out
}

// previewImport reads the statements attached to a message and says, for
// each, how many of its lines importing it would add and how many the
// ledger already holds (from this file or the same lines in another
// format), changing nothing.
func previewImport(ctx context.Context, m Mail, pv *Previewer, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.PreviewImportArgs)
	msg, err := fetchPlain(ctx, m, c.Caller.TenantID, c.Caller.UserID, a.MessageID)
	if errors.Is(err, ErrNoMessage) {
		return Output{}, fail(contracts.CodeNotFound, "There is no message with that id in your mailbox.")
	} else if err != nil {
		return Output{}, fmt.Errorf("fetch mail: %w", err)
	}
	known, err := tx.KnownSenderDomain(ctx, c.Caller.TenantID, c.Caller.UserID, SenderDomain(msg.From))
	if err != nil {
		return Output{}, err
	}
	out := contracts.ImportPreview{MessageID: a.MessageID, Subject: msg.Subject, From: msg.From, NewSender: !known, Files: []contracts.FilePreview{}}
	for _, f := range msg.Files {
		if !isStatementFile(f) {
			continue
		}
		if pv == nil { // no parser here: the files are named, unread
			out.Files = append(out.Files, contracts.FilePreview{Filename: f.Name, Summary: f.Name})
			continue
		}
		fp := pv.previewFile(ctx, tx, c.Caller.TenantID, c.Caller.UserID, f)
		if fp.Err != nil {
			return Output{}, fp.Err
		}
		out.Files = append(out.Files, fp.FilePreview)
	}
	return Output{Data: out}, nil
}

// filePreview is a file's preview, or the store's error reading it.
type filePreview struct {
	contracts.FilePreview
	Err error
}

// previewFile reads one attachment and says what importing it would add:
// its preview followed by how many lines are new and how many already in
// the ledger, and which would be linked to (or only may be) expenses typed
// by hand.
func (p *Previewer) previewFile(ctx context.Context, tx Tx, tenant, user string, f File) filePreview {
	st, unreadable := p.read(ctx, tenant, user, f)
	if unreadable != "" {
		return filePreview{FilePreview: contracts.FilePreview{Filename: f.Name, Summary: unreadable}}
	}
	return previewStatement(ctx, tx, tenant, user, f, st)
}

// previewStatement says what importing f, read as st, would store.
func previewStatement(ctx context.Context, tx Tx, tenant, user string, f File, st Statement) filePreview {
	out := filePreview{FilePreview: contracts.FilePreview{Filename: f.Name}}
	out.Readable = true
	out.Summary = Preview(f.Name, st)
	for _, l := range st.Transactions {
		if l.Currency == "" {
			return out // cannot be stored as it is; the preview says why
		}
	}
	id, _ := DocumentID(tenant, user, f.Data)
	lines := ledgerLines(tenant, user, id, st)
	plan, err := tx.PlanImport(ctx, lines)
	if err != nil {
		out.Err = err
		return out
	}
	out.New, out.Already = plan.New, plan.Already
	out.Linked, out.Doubtful = matchWords(plan.Linked, lines), matchWords(plan.Doubtful, lines)
	out.Summary += fmt.Sprintf("; %d new, %d already in your ledger", plan.New, plan.Already)
	return out
}

// ledgerLines are a statement's lines as the importer stores them.
func ledgerLines(tenant, user, docID string, st Statement) []store.Transaction {
	lines := make([]store.Transaction, 0, len(st.Transactions))
	for j, key := range DedupeKeys(st.Transactions) {
		l := st.Transactions[j]
		lines = append(lines, store.Transaction{TenantID: tenant, UserID: user, DocumentID: docID, Date: l.Date,
			AmountMinor: l.AmountMinor, Currency: l.Currency, Description: l.Description, Vendor: l.Vendor, Category: l.Category,
			FITID: l.FITID, Account: l.Account, DedupeKey: key})
	}
	return lines
}

// accountFITID is the bank's id of a line, qualified by its account when
// the file names one and the id does not already say it (MT940 and camt
// ids do; an OFX FITID is unique only within its account).
func accountFITID(l StatementLine) string {
	if l.Account == "" || strings.HasPrefix(l.FITID, l.Account+":") {
		return l.FITID
	}
	return l.Account + ":" + l.FITID
}
