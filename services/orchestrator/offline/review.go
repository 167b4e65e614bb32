package offline

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// Review of imported transactions and undo: "what needs review?", "mark 12
// as groceries", "fix transaction 12: it's rent", "clear the review on
// transaction 12"; "undo that", "undo the last import", "take that back".

var (
	undoRe        = mustCompile(`(?i)^(?:please\s+)?(?:undo|revert|reverse|roll\s*back)\b|\b(?:undo|revert)\s+(?:that|it|this|my|the)\b|\btake\s+(?:that|it|this)\s+back\b`)
	needsReviewRe = mustCompile(`(?i)\b(?:what|which|show|list|anything|any|see)\b.*\b(?:needs?|to|for|awaiting)\s+(?:a\s+)?review\b|^(?:needs?|to)\s+review\b|\b(?:should|must|need\s+to|have\s+to|ought\s+to)\s+(?:i\s+)?(?:review|check)\b|\b(?:à|a)\s+(?:vérifier|revoir)\b`)
	clearReviewRe = mustCompile(`(?i)\b(?:clear|remove|drop|resolve|dismiss)\b.*\b(?:review|flag)\b.*?(?:transaction\s*)?#?(\d{1,12})\b|\bmark\s+(?:transaction\s*)?#?(\d{1,12})\s+as\s+(?:reviewed|ok|okay|fine|correct|checked)\b`)
	markAsRe      = mustCompile(`(?i)^(?:please\s+)?(?:mark|tag|categori[sz]e)\s+(?:transaction\s*)?#?(\d{1,12})\s+(?:as|under|in(?:to)?)\s+['"]?([a-z][a-z &'-]{0,62}?)['"]?\s*[.!]?$`)
	fixTxRe       = mustCompile(`(?i)\b(?:fix|correct|change|update|set|categori[sz]e)\s+transaction\s*#?(\d{1,12})\b\s*[:,.-]?\s*(.*)$`)
	fixRestRe     = mustCompile(`(?i)^(?:(?:it'?s|it\s+is|it\s+was|that'?s|that\s+is|this\s+is|is|was|as|to|category|to\s+category|into|under)\s+)*(?:an?\s+|the\s+)?['"]?([a-z][a-z &'-]{0,62}?)['"]?\s*[.!]?$`)
)

// reviewOrUndo reads a review or undo request; ok is false for any other.
func reviewOrUndo(text string) (orchestrator.Decision, bool) {
	switch {
	case undoRe.MatchString(text):
		args := contracts.GetLastChangeArgs{}
		if importsRe.MatchString(text) {
			k := "import"
			args.Scope = &k
		}
		return call(contracts.ToolGetLastChange, args), true
	}
	if m := clearReviewRe.FindStringSubmatch(text); m != nil {
		id, _ := strconv.ParseInt(m[1]+m[2], 10, 64)
		if id > 0 {
			clear := "clear"
			return call(contracts.ToolUpdateTransaction, contracts.UpdateTransactionArgs{ID: id, Review: &clear}), true
		}
	}
	if m := markAsRe.FindStringSubmatch(text); m != nil {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		cat := strings.ToLower(strings.TrimSpace(m[2]))
		if id > 0 && cat != "" {
			return call(contracts.ToolUpdateTransaction, contracts.UpdateTransactionArgs{ID: id, Category: &cat}), true
		}
	}
	if m := fixTxRe.FindStringSubmatch(text); m != nil {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		if id <= 0 {
			return orchestrator.Decision{}, false
		}
		r := fixRestRe.FindStringSubmatch(strings.TrimSpace(m[2]))
		if r == nil || strings.TrimSpace(r[1]) == "" {
			return clarify(fmt.Sprintf("What is transaction %d? Give its category, e.g. \"it's rent\".", id)), true
		}
		cat := strings.ToLower(strings.TrimSpace(r[1]))
		clear := "clear"
		return call(contracts.ToolUpdateTransaction, contracts.UpdateTransactionArgs{ID: id, Category: &cat, Review: &clear}), true
	}
	if needsReviewRe.MatchString(text) {
		st := "needs_review"
		return call(contracts.ToolGetTransactions, contracts.GetTransactionsArgs{ReviewStatus: &st}), true
	}
	return orchestrator.Decision{}, false
}

// undoFound goes on from get_last_change when the person asked to undo:
// the undo of the change it found. With none, ok is false and the answer
// says there is nothing to undo.
func undoFound(p orchestrator.Prompt, last orchestrator.StepRecord) (orchestrator.Decision, bool) {
	if last.Tool != contracts.ToolGetLastChange || !last.OK || last.Decision != "" || !undoRe.MatchString(clean(p.Text)) {
		return orchestrator.Decision{}, false
	}
	var out contracts.LastChange
	if json.Unmarshal(last.Data, &out) != nil || out.Change == nil || out.ChangeID != 0 {
		return orchestrator.Decision{}, false
	}
	return call(contracts.ToolUndoChange, contracts.UndoChangeArgs{ChangeID: out.Change.ID}), true
}
