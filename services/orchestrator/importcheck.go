package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/internal/wording"
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
func seenFetch(args, data json.RawMessage, _ Env) (summary, missing string) {
	var a contracts.FetchEmailAttachmentsArgs
	_ = json.Unmarshal(args, &a)
	var p contracts.ImportPreview
	if err := json.Unmarshal(data, &p); err != nil || p.MessageID != a.MessageID || len(p.Files) == 0 {
		return "Import the statements attached to that message?", ""
	}
	if nothing, already := nothingNew(p.Files); nothing {
		names := make([]string, len(p.Files))
		for i, f := range p.Files {
			names[i] = quote(f.Filename)
		}
		return "", fmt.Sprintf("Nothing new in %s: all %d transaction%s %s already in your ledger.",
			strings.Join(names, ", "), already, wording.Plural(already), isAre(already))
	}
	var b strings.Builder
	names := make([]string, len(p.Files))
	for i, f := range p.Files {
		names[i] = quote(f.Filename)
	}
	fmt.Fprintf(&b, "Import %s from \"%s\", sent by %s?", strings.Join(names, ", "), quote(p.Subject), quote(p.From))
	for _, f := range p.Files {
		b.WriteString(" " + quote(f.Summary) + ".") // with "N new, M already in your ledger"
		for _, l := range f.Linked {
			b.WriteString(" Counted once with what you typed: " + quote(l) + ".")
		}
		for _, d := range f.Doubtful {
			b.WriteString(" Kept as its own entry though it may be what you typed: " + quote(d) + ".")
		}
	}
	if p.NewSender {
		b.WriteString(" You have never imported a statement from this sender before: check that it really is your bank.")
	}
	return b.String(), ""
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
func describePreviewImport(data json.RawMessage) string {
	var p contracts.ImportPreview
	_ = json.Unmarshal(data, &p)
	if len(p.Files) == 0 {
		return "That message has no statement attached."
	}
	if nothing, already := nothingNew(p.Files); nothing {
		return fmt.Sprintf("Nothing new: all %d transaction%s %s already in your ledger.", already, wording.Plural(already), isAre(already))
	}
	var lines []string
	for _, f := range p.Files {
		lines = append(lines, "- "+quote(f.Summary))
		for _, d := range f.Doubtful {
			lines = append(lines, "  may be what you typed: "+quote(d))
		}
	}
	return "If imported:\n" + strings.Join(lines, "\n")
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
