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

func describeUploadRead(l lang, data json.RawMessage) string {
	var u contracts.UploadRead
	_ = json.Unmarshal(data, &u)
	switch u.Kind {
	case contracts.UploadStatement:
		if u.Statement == nil {
			return quote(u.Filename) + l.say(" is a bank statement.", " est un relevé bancaire.")
		}
		return quote(u.Filename) + l.say(" is a bank statement: ", " est un relevé bancaire : ") + quote(u.Statement.Summary) + "."
	case contracts.UploadReceipt:
		return describeReceipt(l, u)
	}
	return l.say("I couldn't read ", "Je n'ai pas pu lire ") + quote(u.Filename) + l.say(": ", " : ") + quote(u.Problem) + "."
}

// describeReceipt says what was read off a receipt, and what to check.
func describeReceipt(l lang, u contracts.UploadRead) string {
	r := u.Receipt
	if r == nil {
		return quote(u.Filename) + l.say(" looks like a receipt, but I couldn't read it.", " ressemble à un reçu, mais je n'ai pas pu le lire.")
	}
	var got []string
	if r.Merchant != "" {
		got = append(got, l.say("from ", "de ")+quote(r.Merchant))
	}
	if r.Date != "" {
		got = append(got, l.say("dated ", "daté du ")+l.date(r.Date))
	}
	if r.Total != "" {
		got = append(got, l.say("total ", "total ")+receiptTotal(l, r))
	}
	out := quote(u.Filename) + l.say(" is a receipt", " est un reçu")
	if len(got) > 0 {
		out += " " + strings.Join(got, ", ")
	}
	out += " (" + readBy(l, r) + ")."
	if len(r.Items) > 0 {
		out += " " + l.count(len(r.Items), nLineItem) + "."
	}
	if len(r.Unsure) > 0 {
		out += l.say(" Please check: ", " À vérifier : ") + strings.Join(quoteAll(r.Unsure), "; ") + "."
	}
	return out
}

func readBy(l lang, r *contracts.ReceiptRead) string {
	if r.ReadBy == "OCR" {
		return l.say("read by OCR", "lu par OCR")
	}
	return l.say("read from the PDF's text", "lu dans le texte du PDF")
}

func receiptTotal(l lang, r *contracts.ReceiptRead) string {
	c := r.Currency
	minor, err := contracts.Amount(r.Total).Minor(c)
	if c == "" || err != nil {
		return strings.TrimSpace(r.Total + " " + c)
	}
	return l.money(contracts.Money{Minor: minor, Currency: c})
}

func proposeImportUpload(args json.RawMessage, s State, _ Env) string {
	l := langOf(s.Locale)
	var a contracts.ImportUploadArgs
	_ = json.Unmarshal(args, &a)
	if u, ok := uploadRead(s, a.DocumentID); ok && u.Statement != nil {
		out := l.sayf("Import %s? %s.", "Importer %s ? %s.", quote(u.Filename), quote(u.Statement.Summary))
		for _, d := range u.Statement.Doubtful {
			out += l.say(" It may hold what you typed as ", " Il contient peut-être ce que vous avez saisi comme ") + quote(d) + "."
		}
		return out
	}
	return l.say("Import the statement you uploaded?", "Importer le relevé que vous avez envoyé ?")
}

func describeImportUpload(l lang, data json.RawMessage) string {
	var out contracts.UploadImported
	_ = json.Unmarshal(data, &out)
	if out.Status == "duplicate" {
		return alreadyImported(l, quote(out.Filename))
	}
	return l.sayf("I'm importing %s; you'll get a notification when it's done.", "J'importe %s ; vous recevrez une notification une fois l'import terminé.", quote(out.Filename))
}

// receiptNote ends an add_expense proposal read from a receipt: where the
// values came from, and what to check.
func receiptNote(l lang, a contracts.AddExpenseArgs, s State) string {
	if a.DocumentID == nil {
		return ""
	}
	u, ok := uploadRead(s, *a.DocumentID)
	if !ok || u.Receipt == nil {
		return l.say(" (from the receipt you uploaded)", " (d'après le reçu que vous avez envoyé)")
	}
	out := l.say(" (from ", " (d'après ") + quote(u.Filename) + ", " + readBy(l, u.Receipt)
	if len(u.Receipt.Unsure) > 0 {
		out += l.say("; please check: ", " ; à vérifier : ") + strings.Join(quoteAll(u.Receipt.Unsure), "; ")
	}
	return out + ")"
}
