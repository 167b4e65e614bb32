package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// readImport is the lookup before an import is proposed: preview_import
// of the same message says what each statement would add.
func readImport(args json.RawMessage) Call {
	var a contracts.FetchEmailAttachmentsArgs
	_ = json.Unmarshal(args, &a)
	raw, _ := json.Marshal(contracts.PreviewImportArgs{MessageID: a.MessageID})
	return Call{Tool: contracts.ToolPreviewImport, Args: raw}
}

// seenFetch is an import's proposal, built from the preview of the
// message's statements: each file with how many of its transactions are
// new and how many already in the ledger, the lines that will be linked
// to an expense typed by hand (counted once), those that may be one but
// will be kept apart, and a warning about a sender never
// imported from. When every statement attached is read and none has
// anything new, missing answers so instead of proposing.
func seenFetch(args, data json.RawMessage, s State, _ Env) (summary, missing string) {
	l := langOf(s.Locale)
	var a contracts.FetchEmailAttachmentsArgs
	_ = json.Unmarshal(args, &a)
	var p contracts.ImportPreview
	if err := json.Unmarshal(data, &p); err != nil || p.MessageID != a.MessageID || len(p.Files) == 0 {
		return importAttached(l), ""
	}
	names := make([]string, len(p.Files))
	for i, f := range p.Files {
		names[i] = quote(f.Filename)
	}
	if nothing, already := nothingNew(p.Files); nothing {
		return "", l.say("Nothing new in ", "Rien de nouveau dans ") + strings.Join(names, ", ") + l.say(": ", " : ") + allAlready(l, already)
	}
	var b strings.Builder
	b.WriteString(l.sayf("Import %s from \"%s\", sent by %s?", "Importer %s de « %s », envoyé par %s ?", strings.Join(names, ", "), quote(p.Subject), quote(p.From)))
	for _, f := range p.Files {
		b.WriteString(" " + quote(f.Summary) + ".") // with "N new, M already in your ledger"
		for _, ln := range f.Linked {
			b.WriteString(l.say(" Counted once with what you typed: ", " Comptée une seule fois avec ce que vous avez saisi : ") + quote(ln) + ".")
		}
		for _, d := range f.Doubtful {
			b.WriteString(l.say(" Kept as its own entry though it may be what you typed: ", " Gardée à part, bien qu'il puisse s'agir de ce que vous avez saisi : ") + quote(d) + ".")
		}
	}
	if p.NewSender {
		b.WriteString(newSenderWarning(l))
	}
	return b.String(), ""
}

// allAlready says that all n lines are in the ledger already.
func allAlready(l lang, n int) string {
	if l == french {
		if n == 1 {
			return "la transaction est déjà dans vos comptes."
		}
		return fmt.Sprintf("les %d transactions sont déjà dans vos comptes.", n)
	}
	return fmt.Sprintf("all %s %s already in your ledger.", l.count(n, nTransaction), isAre(n))
}

// nothingNew reports whether every file was read and none would add a
// line, and how many lines they hold that the ledger already has.
func nothingNew(files []contracts.FilePreview) (bool, int) {
	already := 0
	for _, f := range files {
		if !f.Readable || f.New > 0 || f.Already == 0 {
			return false, 0
		}
		already += f.Already
	}
	return true, already
}

// describePreviewImport reads preview_import's result aloud.
func describePreviewImport(l lang, data json.RawMessage) string {
	var p contracts.ImportPreview
	_ = json.Unmarshal(data, &p)
	if len(p.Files) == 0 {
		return l.say("That message has no statement attached.", "Ce message n'a aucun relevé en pièce jointe.")
	}
	if nothing, already := nothingNew(p.Files); nothing {
		return l.say("Nothing new: ", "Rien de nouveau : ") + allAlready(l, already)
	}
	var lines []string
	for _, f := range p.Files {
		lines = append(lines, "- "+quote(f.Summary))
		for _, d := range f.Doubtful {
			lines = append(lines, l.say("  may be what you typed: ", "  peut-être ce que vous avez saisi : ")+quote(d))
		}
	}
	return l.say("If imported:\n", "Si vous l'importez :\n") + strings.Join(lines, "\n")
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
