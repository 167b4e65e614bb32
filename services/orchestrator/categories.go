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

func describeCategories(l lang, data json.RawMessage) string {
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
		parts = append(parts, l.say("Your categories: ", "Vos catégories : ")+strings.Join(defaults, ", ")+".")
	}
	if len(own) > 0 {
		parts = append(parts, l.say("Your own: ", "Les vôtres : ")+strings.Join(own, ", ")+".")
	}
	if len(parts) == 0 {
		return l.say("You have added no categories of your own.", "Vous n'avez ajouté aucune catégorie à vous.")
	}
	return strings.Join(parts, " ")
}

func proposeAddCategory(args json.RawMessage, s State, _ Env) string {
	var a contracts.AddCategoryArgs
	_ = json.Unmarshal(args, &a)
	return langOf(s.Locale).sayf("Add the category '%s'?", "Ajouter la catégorie « %s » ?", quote(a.Name))
}

func describeCategoryAdded(l lang, data json.RawMessage) string {
	var out contracts.CategoryAdded
	_ = json.Unmarshal(data, &out)
	if !out.Added {
		return l.sayf("You already have the category '%s'.", "Vous avez déjà la catégorie « %s ».", quote(out.Name))
	}
	return l.sayf("Added the category '%s'.", "Catégorie « %s » ajoutée.", quote(out.Name))
}

// ruleWords names a rule: "'spotify' → subscriptions".
func ruleWords(l lang, r contracts.RuleView) string {
	return l.sayf("'%s' → %s", "« %s » → %s", quote(r.Pattern), quote(r.Category))
}

// patternWords is a pattern in l's quotation marks: 'spotify', « spotify ».
func patternWords(l lang, p string) string { return l.sayf("'%s'", "« %s »", quote(p)) }

func describeRules(l lang, data json.RawMessage) string {
	var out contracts.RuleList
	_ = json.Unmarshal(data, &out)
	if len(out.Rules) == 0 {
		return l.say("You have no rules yet.", "Vous n'avez encore aucune règle.")
	}
	var b strings.Builder
	b.WriteString(l.say("Your rules, in the order they are tried (the longest pattern first):\n",
		"Vos règles, dans l'ordre où elles sont essayées (le motif le plus long d'abord) :\n"))
	for _, r := range out.Rules {
		fmt.Fprintf(&b, "- %s\n", ruleWords(l, r))
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
func entryList(l lang, m contracts.EntryMatches) string {
	var b strings.Builder
	for i, e := range m.Entries {
		if i == shownEntries {
			break
		}
		desc := quote(e.Description)
		if e.Merchant != "" && e.Merchant != e.Description {
			desc += " (" + quote(e.Merchant) + ")"
		}
		b.WriteString(l.sayf("\n- %s %s, %s, now %s", "\n- %s %s, %s, actuellement %s", l.date(e.Date), desc, l.money(e.Amount), quote(e.Category)))
	}
	if more := m.Count - min(len(m.Entries), shownEntries); more > 0 {
		b.WriteString(l.sayf("\n- and %d more", "\n- et %d de plus", more))
	}
	return b.String()
}

func matchWhere(l lang, m contracts.EntryMatches) string {
	if m.Range == "" {
		return ""
	}
	return " " + rangeWords(l, m.Range, m.From, m.To)
}

// nMatch agrees with a count of entries that match a pattern.
var nMatch = noun{"match", "match", "correspond à", "correspondent à"}

func describeMatches(l lang, data json.RawMessage) string {
	var m contracts.EntryMatches
	_ = json.Unmarshal(data, &m)
	out := fmt.Sprintf("%s %s %s%s.", l.count(m.Count, nEntry), l.word(m.Count, nMatch), patternWords(l, m.Pattern), matchWhere(l, m))
	if m.Count > 0 {
		out += entryList(l, m)
	}
	if m.Rule != nil {
		out += l.say("\nYour rule: ", "\nVotre règle : ") + ruleWords(l, *m.Rule) + "."
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func proposeSetRule(args json.RawMessage, s State, _ Env) string {
	var a contracts.SetRuleArgs
	_ = json.Unmarshal(args, &a)
	return fileFromNow(langOf(s.Locale), a.Pattern, a.Category)
}

// fileFromNow is the proposal of a new rule.
func fileFromNow(l lang, pattern, category string) string {
	return l.sayf("From now on, file entries matching %s under %s?", "Désormais, classer les opérations correspondant à %s dans %s ?", patternWords(l, pattern), quote(category))
}

// seenSetRule shows the rule a change makes or changes and how many of
// the person's entries its pattern matches now; a rule that already says
// the same is answered at once.
func seenSetRule(args, data json.RawMessage, s State, env Env) (summary, missing string) {
	l := langOf(s.Locale)
	var a contracts.SetRuleArgs
	_ = json.Unmarshal(args, &a)
	m, ok := matchesOf(data, a.Pattern)
	if !ok {
		return proposeSetRule(args, s, env), ""
	}
	category := foldPattern(a.Category)
	if m.Rule != nil && m.Rule.Category == category {
		return "", l.sayf("Your rule already files entries matching %s under %s.", "Votre règle classe déjà les opérations correspondant à %s dans %s.",
			patternWords(l, m.Rule.Pattern), quote(category))
	}
	out := fileFromNow(l, m.Pattern, category)
	if m.Rule != nil {
		out = l.sayf("Change the rule for %s from %s to %s?", "Modifier la règle pour %s de %s à %s ?", patternWords(l, m.Rule.Pattern), quote(m.Rule.Category), quote(category))
	}
	out += l.sayf(" It matches %s of your entries now; they keep their category", " Elle correspond aujourd'hui à %s ; elles gardent leur catégorie",
		l.say(fmt.Sprint(m.Count), l.count(m.Count, nEntry)))
	if m.Count == 0 {
		return out + ".", ""
	}
	return out + l.say(":", " :") + entryList(l, m), ""
}

func describeRuleSet(l lang, data json.RawMessage) string {
	var out contracts.RuleSet
	_ = json.Unmarshal(data, &out)
	if out.Before != "" && out.Before != out.Rule.Category {
		return l.sayf("Changed the rule for %s from %s to %s.", "Règle pour %s modifiée : de %s à %s.", patternWords(l, out.Rule.Pattern), quote(out.Before), quote(out.Rule.Category))
	}
	return l.say("Saved the rule ", "Règle enregistrée : ") + ruleWords(l, out.Rule) + "."
}

func proposeDeleteRule(args json.RawMessage, s State, _ Env) string {
	var a contracts.DeleteRuleArgs
	_ = json.Unmarshal(args, &a)
	return deleteRuleFor(langOf(s.Locale), a.Pattern)
}

// deleteRuleFor is the proposal to delete the rule of a pattern.
func deleteRuleFor(l lang, pattern string) string {
	return l.sayf("Delete the rule for %s?", "Supprimer la règle pour %s ?", patternWords(l, pattern))
}

// seenDeleteRule shows the rule a deletion removes; a pattern with no
// rule is answered at once.
func seenDeleteRule(args, data json.RawMessage, s State, _ Env) (summary, missing string) {
	l := langOf(s.Locale)
	var a contracts.DeleteRuleArgs
	_ = json.Unmarshal(args, &a)
	m, ok := matchesOf(data, a.Pattern)
	if !ok {
		return deleteRuleFor(l, a.Pattern), ""
	}
	if m.Rule == nil {
		return "", l.sayf("You have no rule for %s, so there is nothing to delete.", "Vous n'avez aucune règle pour %s : il n'y a rien à supprimer.", patternWords(l, m.Pattern))
	}
	return l.sayf("Delete the rule %s? Entries already filed keep their category.", "Supprimer la règle %s ? Les opérations déjà classées gardent leur catégorie.", ruleWords(l, *m.Rule)), ""
}

func describeRuleDeleted(l lang, data json.RawMessage) string {
	var out contracts.RuleDeleted
	_ = json.Unmarshal(data, &out)
	return l.say("Deleted the rule ", "Règle supprimée : ") + ruleWords(l, out.Rule) + "."
}

func proposeRecategorize(args json.RawMessage, s State, _ Env) string {
	var a contracts.RecategorizeArgs
	_ = json.Unmarshal(args, &a)
	return fileYours(langOf(s.Locale), a.Pattern, a.Category)
}

// fileYours is the proposal to file the entries a pattern matches.
func fileYours(l lang, pattern, category string) string {
	return l.sayf("File your entries matching %s under %s?", "Classer vos opérations correspondant à %s dans %s ?", patternWords(l, pattern), quote(category))
}

// seenRecategorize shows how many entries a recategorize files and the
// newest of them; a pattern that matches nothing is answered at once.
func seenRecategorize(args, data json.RawMessage, s State, _ Env) (summary, missing string) {
	l := langOf(s.Locale)
	var a contracts.RecategorizeArgs
	_ = json.Unmarshal(args, &a)
	m, ok := matchesOf(data, a.Pattern)
	if !ok {
		return fileYours(l, a.Pattern, a.Category), ""
	}
	if m.Count == 0 {
		return "", l.sayf("None of your entries%s match %s, so there is nothing to file.", "Aucune de vos opérations%s ne correspond à %s : il n'y a rien à classer.",
			matchWhere(l, m), patternWords(l, m.Pattern))
	}
	return l.sayf("File %s matching %s%s under %s?%s", "Classer %s correspondant à %s%s dans %s ?%s", l.count(m.Count, nEntry), patternWords(l, m.Pattern), matchWhere(l, m),
		quote(foldPattern(a.Category)), entryList(l, m)), ""
}

func describeRecategorized(l lang, data json.RawMessage) string {
	var out contracts.Recategorized
	_ = json.Unmarshal(data, &out)
	where := ""
	if out.Range != "" {
		where = " " + rangeWords(l, out.Range, out.From, out.To)
	}
	if l == french {
		return fmt.Sprintf("%s correspondant à %s%s %s dans %s.", l.count(out.Changed, nEntry), patternWords(l, out.Pattern), where,
			l.word(out.Changed, noun{fr: "classée", frs: "classées"}), quote(out.Category))
	}
	return fmt.Sprintf("Filed %s matching %s%s under %s.", l.count(out.Changed, nEntry), patternWords(l, out.Pattern), where, quote(out.Category))
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
