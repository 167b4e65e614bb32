package offline

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

var (
	howMuchRe   = mustCompile(`How much (?:was (.+)|did you pay(?: for (.+))?)\?$`)
	whatForRe   = mustCompile(`^What was the (.+) for\?$`)
	changeToRe  = mustCompile(`^What should I change expense (\d+) to\?`)
	proposedAdd = mustCompile(`^Proposed: Add expense '(.*)' (.+?)(?: on (\d{4}-\d{2}-\d{2}))?(?: in (.+))?\?$`)
)

// followUp reads a reply to the offline model's own last question or
// proposal. A reply that is a new request of its own ("add 12.50 lunch
// today" while "How much was coffee?" is open) starts over instead of being
// merged into the old one: ok is false and the text is read afresh.
func followUp(p orchestrator.Prompt, r *reply) (orchestrator.Decision, bool) {
	text := r.text
	n := len(p.History)
	if n == 0 || p.History[n-1].Role != "assistant" {
		return orchestrator.Decision{}, false
	}
	q := p.History[n-1].Text
	if isDeclineQuestion(q) {
		// The reply to "what should I change?" after a no corrects the
		// proposal declined just before.
		q = declinedProposal(p.History[:n-1])
	}
	q = englishProposal(q)
	if m := proposedAdd.FindStringSubmatch(q); m != nil {
		return correctAdd(m, r)
	}
	if m := proposedChange.FindStringSubmatch(q); m != nil && looksLikeCorrection(r) {
		return correctChange(m, text, p.Now)
	}
	if proposedDelete.MatchString(q) && looksLikeCorrection(r) {
		return correctDelete(text)
	}
	if m := changeToRe.FindStringSubmatch(q); m != nil {
		if startsOver(r) {
			return orchestrator.Decision{}, false
		}
		var id int64
		_, _ = fmt.Sscan(m[1], &id)
		return updateCall(id, text, p.Now), true
	}
	how, what := howMuchRe.FindStringSubmatch(q), whatForRe.FindStringSubmatch(q)
	if q != askAddWhat && how == nil && what == nil {
		return orchestrator.Decision{}, false
	}
	if startsOver(r) {
		return orchestrator.Decision{}, false
	}
	first := firstRequest(p.History)
	switch {
	case q == askAddWhat:
		return addExpense("add "+text, p.Now, p.Currency), true
	case how != nil:
		// The amount was missing or unusable: keep the rest of the request.
		base := stripAmounts(first, p.Now)
		if itemFrom(base) == "" {
			base += " " + cmpOr(how[1], how[2])
		}
		return addExpense(base+" "+text, p.Now, p.Currency), true
	default:
		return addExpense(first+" for "+text, p.Now, p.Currency), true
	}
}

// isDeclineQuestion reports whether q is the question asked after a no.
func isDeclineQuestion(q string) bool {
	return strings.HasSuffix(q, orchestrator.AskWhatToChangeIn("en")) || strings.HasSuffix(q, orchestrator.AskWhatToChangeIn("fr"))
}

// declinedProposal is the proposal a no just declined, as history shows
// it, or "" when there is none.
func declinedProposal(h []orchestrator.Entry) string {
	for i := len(h) - 1; i >= 0 && i >= len(h)-3; i-- {
		if h[i].Role == "assistant" && strings.HasPrefix(h[i].Text, "Proposed: ") {
			return h[i].Text
		}
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// reply is the text of a turn as the model reads it, with what
// understand makes of it on its own, worked out at most once: the
// follow-up readers ask whether a reply starts over, and a reply that
// does is then read on its own.
type reply struct {
	text     string
	now      time.Time
	currency string
	read     orchestrator.Decision
	done     bool
}

// understood is understand's decision on the reply.
func (r *reply) understood() orchestrator.Decision {
	if !r.done {
		r.read, r.done = understand(r.text, r.now, r.currency), true
	}
	return r.read
}

// startsOver reports whether a reply is a request of its own rather than
// an answer: it reads as a complete call by itself, or it starts with a
// verb and names an item of its own.
func startsOver(r *reply) bool {
	text, now, d := r.text, r.now, r.understood()
	if d.Kind == orchestrator.DecisionToolCalls {
		return true
	}
	if !verbStart.MatchString(text) {
		return false
	}
	_, rest, _ := findDate(text, now)
	if f, ok, _ := pickAmount(findAmounts(rest)); ok {
		rest = cutOut(rest, f)
	}
	return itemFrom(rest) != "" || d.Kind == orchestrator.DecisionAnswer && !strings.HasPrefix(d.Content, "I'm not sure")
}

// firstRequest is the user message that began the current chain of the
// offline model's questions.
func firstRequest(h []orchestrator.Entry) string {
	first := ""
	for i := len(h) - 1; i >= 1; i -= 2 {
		if h[i].Role != "assistant" || h[i-1].Role != "user" || !isOurQuestion(h[i].Text) {
			break
		}
		first = h[i-1].Text
	}
	return spelledToDigits(clean(first))
}

func isOurQuestion(q string) bool {
	return q == askAddWhat || howMuchRe.MatchString(q) || whatForRe.MatchString(q)
}

// stripAmounts drops every amount from text, keeping its date (written as
// YYYY-MM-DD) and the rest.
func stripAmounts(text string, now time.Time) string {
	date, rest, ok := findDate(text, now)
	fs := findAmounts(rest)
	for i := len(fs) - 1; i >= 0; i-- {
		rest = cutOut(rest, fs[i])
	}
	if ok {
		rest += " " + date
	}
	return rest
}

var (
	correctionCue = mustCompile(`(?i)^(no|nope|nah|actually|sorry|oops|wait|make it|change it to|change that to|it was|it's|its|i meant|should be|not|that's wrong|wrong)\b[,.!]?`)
	notPhrase     = mustCompile(`(?i)(?:,\s*|\s+|^)not\s+([£$€¥]?\s?[\d.,]+(?:\s?[a-z]{1,7}\b)?|[a-z][a-z ]*?)\s*(?:[,.!]|$|\s+but\b)`)
)

// correctAdd reads a correction to a proposed expense ("no, 15 not 12",
// "make it yesterday", "dinner not lunch") and proposes the expense again
// with the change. Text that does not read as a correction is a new
// request: ok is false.
func correctAdd(m []string, r *reply) (orchestrator.Decision, bool) {
	text, now := r.text, r.now
	cue := correctionCue.MatchString(text)
	notMatch := notPhrase.FindStringSubmatchIndex(text)
	if !cue && notMatch == nil && (len(strings.Fields(text)) > 3 || startsOver(r)) {
		return orchestrator.Decision{}, false
	}
	cur, ok, _ := pickAmount(findAmounts(strings.ReplaceAll(m[2], ",", "")))
	if !ok || cur.Problem != "" || clean(m[1]) == "" {
		return orchestrator.Decision{}, false // not a proposal this model can read back
	}
	args := contracts.AddExpenseArgs{Item: clean(m[1]), Amount: contracts.Amount(cur.Amount)}
	if cur.Currency != "" {
		c := cur.Currency
		args.Currency = &c
	}
	if m[3] != "" {
		d := m[3]
		args.Date = &d
	}
	if m[4] != "" {
		c := m[4]
		args.Category = &c
	}
	rest, wrong := text, ""
	if notMatch != nil {
		wrong = strings.ToLower(strings.TrimSpace(text[notMatch[2]:notMatch[3]]))
		rest = text[:notMatch[0]] + " " + text[notMatch[1]:]
	}
	rest = correctionCue.ReplaceAllString(strings.TrimSpace(rest), " ")
	changed := false
	if c, r, ok := findCategory(rest); ok {
		args.Category, rest, changed = &c, r, true
	}
	if d, r, ok := findDate(rest, now); ok {
		args.Date, rest, changed = &d, r, true
	}
	if f, ok, ambiguous := pickAmount(findAmounts(rest)); ok || ambiguous {
		if ambiguous || f.Problem != "" {
			return clarify(amountQuestion(f, args.Item)), true
		}
		args.Amount, rest, changed = contracts.Amount(f.Amount), cutOut(rest, f), true
		if f.Currency != "" {
			args.Currency = &f.Currency
		}
	}
	if item := itemFrom(rest); item != "" && (!changed || wrong == args.Item) {
		args.Item, changed = item, true
	}
	if !changed {
		return clarify(askWhatFix), true
	}
	return call(contracts.ToolAddExpense, args), true
}

var (
	// A proposal shows the expense it touches, and each change as
	// "before → after"; the blind forms without them are read too.
	proposedChange = mustCompile(`^Proposed: Change expense #(\d+)(?: \(.*?\))?: (.+)\?$`)
	proposedDelete = mustCompile(`^Proposed: Delete expense #(\d+)(?:: .*)?\?$`)
	changeParts    = mustCompile(`(?:^|, )(item (?:'.*?' → )?'(.*?)'|amount (?:\S+ → )?(\S+)|date (?:\S+ → )?(\d{4}-\d{2}-\d{2})|category (?:.+? → )?(.+?))(?:,|$)`)
)

// looksLikeCorrection reports whether text corrects the proposal before it
// rather than asking something new.
func looksLikeCorrection(r *reply) bool {
	text := r.text
	return correctionCue.MatchString(text) || notPhrase.MatchString(text) || len(strings.Fields(text)) <= 3 && !startsOver(r)
}

// withoutWrong drops the cue words and the "not X" part of a correction.
func withoutWrong(text string) string {
	if m := notPhrase.FindStringIndex(text); m != nil {
		text = text[:m[0]] + " " + text[m[1]:]
	}
	return correctionCue.ReplaceAllString(strings.TrimSpace(text), " ")
}

// correctDelete reads "no, 4 not 3" after a proposed deletion of #3.
func correctDelete(text string) (orchestrator.Decision, bool) {
	rest := withoutWrong(text)
	id, ok := findNumber(rest)
	if !ok {
		if fs := findAmounts(rest); len(fs) == 1 && !fs[0].Marked && fs[0].Problem == "" && allDigits(fs[0].Amount) {
			_, err := fmt.Sscan(fs[0].Amount, &id)
			ok = err == nil && id > 0
		}
	}
	if !ok {
		return clarify(askWhichNum), true
	}
	return call(contracts.ToolDeleteExpense, contracts.DeleteExpenseArgs{ID: id}), true
}

// correctChange reads a correction to a proposed change: the changes of
// the proposal stay, the new ones replace them field by field.
func correctChange(m []string, text string, now time.Time) (orchestrator.Decision, bool) {
	var id int64
	_, _ = fmt.Sscan(m[1], &id)
	args := contracts.UpdateExpenseArgs{ID: id}
	for _, p := range changeParts.FindAllStringSubmatch(m[2], -1) {
		switch {
		case strings.HasPrefix(p[1], "item "):
			item := p[2]
			args.Item = &item
		case strings.HasPrefix(p[1], "amount "):
			// "15" as typed, or "£15.00" as a seen proposal shows it.
			if fs := findAmounts(p[3]); len(fs) == 1 && fs[0].Problem == "" {
				a := contracts.Amount(fs[0].Amount)
				args.Amount = &a
				if fs[0].Currency != "" {
					args.Currency = &fs[0].Currency
				}
			}
		case strings.HasPrefix(p[1], "date "):
			d := p[4]
			args.Date = &d
		case strings.HasPrefix(p[1], "category "):
			c := p[5]
			args.Category = &c
		}
	}
	d := updateCall(id, withoutWrong(text), now)
	if d.Kind != orchestrator.DecisionToolCalls {
		return d, true
	}
	var fix contracts.UpdateExpenseArgs
	_ = json.Unmarshal(d.Calls[0].Args, &fix)
	if fix.Item != nil {
		args.Item = fix.Item
	}
	if fix.Amount != nil {
		args.Amount = fix.Amount
	}
	if fix.Date != nil {
		args.Date = fix.Date
	}
	if fix.Category != nil {
		args.Category = fix.Category
	}
	return call(contracts.ToolUpdateExpense, args), true
}
