package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The rows of the tools over uploaded files (POST /v1/uploads): what
// read_upload found is kept in memory under entities.upload, and the
// proposals that follow (import_upload, or add_expense from a receipt)
// say it in the server's words.

// uploadNote is how an upload appears in the conversation, after what the
// person said with it: the model reads it, and read_upload takes its id.
func uploadNote(u *contracts.Upload) string {
	return fmt.Sprintf("[uploaded file %s, %s, document_id %s]", quote(u.Filename), wording.Size(u.Size), u.DocumentID)
}

func rememberUpload(data json.RawMessage) []memoryValue {
	return []memoryValue{{"entities.upload", data}}
}

// uploadRead is what read_upload found for doc, from memory.
func uploadRead(s State, doc string) (contracts.UploadRead, bool) {
	var u contracts.UploadRead
	raw, ok := s.Memory["entities.upload"]
	if !ok || json.Unmarshal(raw, &u) != nil || u.DocumentID != doc {
		return u, false
	}
	return u, true
}

func describeUploadRead(data json.RawMessage) string {
	var u contracts.UploadRead
	_ = json.Unmarshal(data, &u)
	switch u.Kind {
	case contracts.UploadStatement:
		if u.Statement == nil {
			return quote(u.Filename) + " is a bank statement."
		}
		return quote(u.Filename) + " is a bank statement: " + quote(u.Statement.Summary) + "."
	case contracts.UploadReceipt:
		return describeReceipt(u)
	}
	return "I couldn't read " + quote(u.Filename) + ": " + quote(u.Problem) + "."
}

// describeReceipt says what was read off a receipt, and what to check.
func describeReceipt(u contracts.UploadRead) string {
	r := u.Receipt
	if r == nil {
		return quote(u.Filename) + " looks like a receipt, but I couldn't read it."
	}
	var got []string
	if r.Merchant != "" {
		got = append(got, "from "+quote(r.Merchant))
	}
	if r.Date != "" {
		got = append(got, "dated "+r.Date)
	}
	if r.Total != "" {
		got = append(got, "total "+receiptTotal(r))
	}
	out := quote(u.Filename) + " is a receipt"
	if len(got) > 0 {
		out += " " + strings.Join(got, ", ")
	}
	out += " (" + readBy(r) + ")."
	if len(r.Items) > 0 {
		out += fmt.Sprintf(" %d line item%s.", len(r.Items), wording.Plural(len(r.Items)))
	}
	if len(r.Unsure) > 0 {
		out += " Please check: " + strings.Join(quoteAll(r.Unsure), "; ") + "."
	}
	return out
}

func readBy(r *contracts.ReceiptRead) string {
	if r.ReadBy == "OCR" {
		return "read by OCR"
	}
	return "read from the PDF's text"
}

func receiptTotal(r *contracts.ReceiptRead) string {
	c := r.Currency
	minor, err := contracts.Amount(r.Total).Minor(c)
	if c == "" || err != nil {
		return strings.TrimSpace(r.Total + " " + c)
	}
	return FormatMoney(contracts.Money{Minor: minor, Currency: c})
}

func proposeImportUpload(args json.RawMessage, s State, _ Env) string {
	var a contracts.ImportUploadArgs
	_ = json.Unmarshal(args, &a)
	if u, ok := uploadRead(s, a.DocumentID); ok && u.Statement != nil {
		out := fmt.Sprintf("Import %s? %s.", quote(u.Filename), quote(u.Statement.Summary))
		for _, d := range u.Statement.Doubtful {
			out += " It may hold what you typed as " + quote(d) + "."
		}
		return out
	}
	return "Import the statement you uploaded?"
}

func describeImportUpload(data json.RawMessage) string {
	var out contracts.UploadImported
	_ = json.Unmarshal(data, &out)
	if out.Status == "duplicate" {
		return quote(out.Filename) + " was already imported, so nothing new was added from it."
	}
	return "I'm importing " + quote(out.Filename) + "; you'll get a notification when it's done."
}

// receiptNote ends an add_expense proposal read from a receipt: where the
// values came from, and what to check.
func receiptNote(a contracts.AddExpenseArgs, s State) string {
	if a.DocumentID == nil {
		return ""
	}
	u, ok := uploadRead(s, *a.DocumentID)
	if !ok || u.Receipt == nil {
		return " (from the receipt you uploaded)"
	}
	out := " (from " + quote(u.Filename) + ", " + readBy(u.Receipt)
	if len(u.Receipt.Unsure) > 0 {
		out += "; please check: " + strings.Join(quoteAll(u.Receipt.Unsure), "; ")
	}
	return out + ")"
}
