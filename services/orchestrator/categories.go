package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Categories and rules: the sentences of their rows in toolRows. A change
// that names a pattern (set_rule, delete_rule, recategorize) is looked up
// first with match_entries, so its proposal shows, from the server's own
// read, how many entries the pattern matches and the newest of them.

// shownEntries is how many matching entries a proposal lists.
const shownEntries = 5

func describeCategories(data json.RawMessage) string {
	var out contracts.CategoryList
	_ = json.Unmarshal(data, &out)
	var defaults, own []string
	for _, c := range out.Categories {
		if c.Own {
			own = append(own, quote(c.Name))
		} else {
			defaults = append(defaults, quote(c.Name))
		}
	}
	var parts []string
	if len(defaults) > 0 {
		parts = append(parts, "Your categories: "+strings.Join(defaults, ", ")+".")
	}
	if len(own) > 0 {
		parts = append(parts, "Your own: "+strings.Join(own, ", ")+".")
	}
	if len(parts) == 0 {
		return "You have added no categories of your own."
	}
	return strings.Join(parts, " ")
}

func proposeAddCategory(args json.RawMessage, _ State, _ Env) string {
	var a contracts.AddCategoryArgs
	_ = json.Unmarshal(args, &a)
	return fmt.Sprintf("Add the category '%s'?", quote(a.Name))
}

func describeCategoryAdded(data json.RawMessage) string {
	var out contracts.CategoryAdded
	_ = json.Unmarshal(data, &out)
	if !out.Added {
		return fmt.Sprintf("You already have the category '%s'.", quote(out.Name))
	}
	return fmt.Sprintf("Added the category '%s'.", quote(out.Name))
}

// ruleWords names a rule: "'spotify' → subscriptions".
func ruleWords(r contracts.RuleView) string {
	return fmt.Sprintf("'%s' → %s", quote(r.Pattern), quote(r.Category))
}

func describeRules(data json.RawMessage) string {
	var out contracts.RuleList
	_ = json.Unmarshal(data, &out)
	if len(out.Rules) == 0 {
		return "You have no rules yet."
	}
	var b strings.Builder
	b.WriteString("Your rules, in the order they are tried (the longest pattern first):\n")
	for _, r := range out.Rules {
		fmt.Fprintf(&b, "- %s\n", ruleWords(r))
	}
	return strings.TrimSpace(b.String())
}

// readMatches looks up the entries a pattern names, in the change's range
// when it has one.
func readMatches(args json.RawMessage) Call {
	var a struct {
		Pattern string  `json:"pattern"`
		Range   *string `json:"range,omitempty"`
	}
	_ = json.Unmarshal(args, &a)
	raw, _ := json.Marshal(contracts.MatchEntriesArgs{Pattern: a.Pattern, Range: a.Range})
	return Call{Tool: contracts.ToolMatchEntries, Args: raw}
}

// matchesOf reads a match_entries result; ok is false when it is about
// another pattern than want (an edit changed it).
func matchesOf(data json.RawMessage, want string) (contracts.EntryMatches, bool) {
	var m contracts.EntryMatches
	if json.Unmarshal(data, &m) != nil {
		return m, false
	}
	return m, m.Pattern == foldPattern(want)
}

// foldPattern is close enough to the store's fold to compare a pattern
// with the one a lookup answered for: lower case, single spaces.
func foldPattern(p string) string { return strings.Join(strings.Fields(strings.ToLower(p)), " ") }

// entryList lists the newest matching entries as a proposal shows them:
// date, description (and merchant), amount and category.
func entryList(m contracts.EntryMatches) string {
	var b strings.Builder
	for i, e := range m.Entries {
		if i == shownEntries {
			break
		}
		desc := quote(e.Description)
		if e.Merchant != "" && e.Merchant != e.Description {
			desc += " (" + quote(e.Merchant) + ")"
		}
		fmt.Fprintf(&b, "\n- %s %s, %s, now %s", e.Date, desc, FormatMoney(e.Amount), quote(e.Category))
	}
	if more := m.Count - min(len(m.Entries), shownEntries); more > 0 {
		fmt.Fprintf(&b, "\n- and %d more", more)
	}
	return b.String()
}

func matchWhere(m contracts.EntryMatches) string {
	if m.Range == "" {
		return ""
	}
	return " " + rangeWords(m.Range, m.From, m.To)
}

func describeMatches(data json.RawMessage) string {
	var m contracts.EntryMatches
	_ = json.Unmarshal(data, &m)
	out := fmt.Sprintf("%d entr%s match '%s'%s.", m.Count, plural(m.Count, "y", "ies"), quote(m.Pattern), matchWhere(m))
	if m.Count > 0 {
		out += entryList(m)
	}
	if m.Rule != nil {
		out += "\nYour rule: " + ruleWords(*m.Rule) + "."
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func proposeSetRule(args json.RawMessage, _ State, _ Env) string {
	var a contracts.SetRuleArgs
	_ = json.Unmarshal(args, &a)
	return fmt.Sprintf("From now on, file entries matching '%s' under %s?", quote(a.Pattern), quote(a.Category))
}

// seenSetRule shows the rule a change makes or changes and how many of
// the person's entries its pattern matches now; a rule that already says
// the same is answered at once.
func seenSetRule(args, data json.RawMessage, env Env) (summary, missing string) {
	var a contracts.SetRuleArgs
	_ = json.Unmarshal(args, &a)
	m, ok := matchesOf(data, a.Pattern)
	if !ok {
		return proposeSetRule(args, State{}, env), ""
	}
	category := foldPattern(a.Category)
	if m.Rule != nil && m.Rule.Category == category {
		return "", fmt.Sprintf("Your rule already files entries matching '%s' under %s.", quote(m.Rule.Pattern), quote(category))
	}
	out := fmt.Sprintf("From now on, file entries matching '%s' under %s?", quote(m.Pattern), quote(category))
	if m.Rule != nil {
		out = fmt.Sprintf("Change the rule for '%s' from %s to %s?", quote(m.Rule.Pattern), quote(m.Rule.Category), quote(category))
	}
	out += fmt.Sprintf(" It matches %d of your entries now; they keep their category", m.Count)
	if m.Count == 0 {
		return out + ".", ""
	}
	return out + ":" + entryList(m), ""
}

func describeRuleSet(data json.RawMessage) string {
	var out contracts.RuleSet
	_ = json.Unmarshal(data, &out)
	if out.Before != "" && out.Before != out.Rule.Category {
		return fmt.Sprintf("Changed the rule for '%s' from %s to %s.", quote(out.Rule.Pattern), quote(out.Before), quote(out.Rule.Category))
	}
	return "Saved the rule " + ruleWords(out.Rule) + "."
}

func proposeDeleteRule(args json.RawMessage, _ State, _ Env) string {
	var a contracts.DeleteRuleArgs
	_ = json.Unmarshal(args, &a)
	return fmt.Sprintf("Delete the rule for '%s'?", quote(a.Pattern))
}

// seenDeleteRule shows the rule a deletion removes; a pattern with no
// rule is answered at once.
func seenDeleteRule(args, data json.RawMessage, env Env) (summary, missing string) {
	var a contracts.DeleteRuleArgs
	_ = json.Unmarshal(args, &a)
	m, ok := matchesOf(data, a.Pattern)
	if !ok {
		return proposeDeleteRule(args, State{}, env), ""
	}
	if m.Rule == nil {
		return "", fmt.Sprintf("You have no rule for '%s', so there is nothing to delete.", quote(m.Pattern))
	}
	return fmt.Sprintf("Delete the rule %s? Entries already filed keep their category.", ruleWords(*m.Rule)), ""
}

func describeRuleDeleted(data json.RawMessage) string {
	var out contracts.RuleDeleted
	_ = json.Unmarshal(data, &out)
	return "Deleted the rule " + ruleWords(out.Rule) + "."
}

func proposeRecategorize(args json.RawMessage, _ State, _ Env) string {
	var a contracts.RecategorizeArgs
	_ = json.Unmarshal(args, &a)
	return fmt.Sprintf("File your entries matching '%s' under %s?", quote(a.Pattern), quote(a.Category))
}

// seenRecategorize shows how many entries a recategorize files and the
// newest of them; a pattern that matches nothing is answered at once.
func seenRecategorize(args, data json.RawMessage, env Env) (summary, missing string) {
	var a contracts.RecategorizeArgs
	_ = json.Unmarshal(args, &a)
	m, ok := matchesOf(data, a.Pattern)
	if !ok {
		return proposeRecategorize(args, State{}, env), ""
	}
	if m.Count == 0 {
		return "", fmt.Sprintf("None of your entries%s match '%s', so there is nothing to file.", matchWhere(m), quote(m.Pattern))
	}
	return fmt.Sprintf("File %d entr%s matching '%s'%s under %s?%s", m.Count, plural(m.Count, "y", "ies"), quote(m.Pattern), matchWhere(m),
		quote(foldPattern(a.Category)), entryList(m)), ""
}

func describeRecategorized(data json.RawMessage) string {
	var out contracts.Recategorized
	_ = json.Unmarshal(data, &out)
	where := ""
	if out.Range != "" {
		where = " " + rangeWords(out.Range, out.From, out.To)
	}
	return fmt.Sprintf("Filed %d entr%s matching '%s'%s under %s.", out.Changed, plural(out.Changed, "y", "ies"), quote(out.Pattern), where, quote(out.Category))
}

// offerRule is recategorize's follow-up: the rule that files entries
// matching the same pattern under the same category from now on,
// proposed in turn.
func offerRule(data json.RawMessage) (Call, bool) {
	var out contracts.Recategorized
	if json.Unmarshal(data, &out) != nil || out.Pattern == "" || out.Category == "" {
		return Call{}, false
	}
	raw, _ := json.Marshal(contracts.SetRuleArgs{Pattern: out.Pattern, Category: out.Category})
	return Call{Tool: contracts.ToolSetRule, Args: raw}, true
}
