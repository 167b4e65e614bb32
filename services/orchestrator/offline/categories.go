package offline

import (
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// Categories and rules in everyday words: "the Unity ones are software",
// "file Unity under software" (files existing entries), "always put
// Spotify under subscriptions" (a rule for next time), "change the Spotify
// rule to entertainment", "delete the Spotify rule", "stop filing Unity as
// software", "what categories do I have", "add a category called pets",
// "show my rules".
var (
	catWord       = `([a-z][a-z0-9 &-]{1,59}?)(?:\s+category)?`
	alwaysRe      = mustCompile(`(?i)^(?:please\s+)?(?:from now on\s*,?\s*)?always\s+(?:file|put|categori[sz]e|class(?:ify)?|treat)\s+(.+?)\s+(?:under|into|as)\s+(?:the\s+)?` + catWord + `(?:\s+from now on)?$`)
	fileUnderRe   = mustCompile(`(?i)^(?:please\s+)?(?:file|put|move|categori[sz]e|class(?:ify)?|mark)\s+(.+?)\s+(?:under|into|as)\s+(?:the\s+)?` + catWord + `$`)
	onesAreRe     = mustCompile(`(?i)^(?:all\s+)?(?:the\s+|my\s+)?(.+?)\s+(?:ones|payments|transactions|entries|expenses|purchases)\s+(?:are|should be|go under|belong (?:in|under))\s+(?:the\s+)?` + catWord + `$`)
	changeRuleRe  = mustCompile(`(?i)^(?:please\s+)?(?:change|update|set|make|switch)\s+(?:the\s+|my\s+)?(.+?)\s+rule\s+(?:to|into|so it files under)\s+(?:the\s+)?` + catWord + `$`)
	deleteRuleRe  = mustCompile(`(?i)^(?:please\s+)?(?:delete|remove|drop|forget)\s+(?:the\s+|my\s+)?(?:rule\s+(?:for|about)\s+(.+?)|(.+?)\s+rule)$`)
	stopFilingRe  = mustCompile(`(?i)^(?:please\s+)?(?:stop|don't|do not|no longer)\s+(?:filing|putting|categori[sz]ing|treating|file|put)\s+(.+?)\s+(?:as|under|into|in)\s+(?:the\s+)?` + catWord + `(?:\s+any more|\s+anymore)?$`)
	addCategoryRe = mustCompile(`(?i)\b(?:add|create|make|new)\b\s+(?:a\s+|an\s+)?(?:new\s+)?category\s+(?:called\s+|named\s+|for\s+)?['"]?([a-z][a-z &-]{1,39}?)['"]?$`)
	listCatsRe    = mustCompile(`(?i)\b(?:what|which|show|list|see)\b.*\bcategor(?:y|ies)\b|^(?:my\s+)?categories$`)
	listRulesRe   = mustCompile(`(?i)\b(?:what|which|show|list|see)\b.*\brules\b|^(?:my\s+)?rules$`)
	periodSplit   = mustCompile(`\s+((?:in|for|from|during|since|over|between|this|last|past|today|yesterday)\b.*)$`)
	notAPattern   = mustCompile(`(?i)^(?:it|that|this|them|those|expense\s*#?\d+|#\d+|\d+)$`)
)

// categoriesAndRules reads a request about categories or rules.
func categoriesAndRules(text string, now time.Time) (orchestrator.Decision, bool) {
	text = strings.TrimRight(strings.TrimSpace(text), ".!?")
	if m := alwaysRe.FindStringSubmatch(text); m != nil {
		if p, ok := patternWords(m[1]); ok {
			return call(contracts.ToolSetRule, contracts.SetRuleArgs{Pattern: p, Category: categoryWords(m[2])}), true
		}
	}
	if m := changeRuleRe.FindStringSubmatch(text); m != nil {
		if p, ok := patternWords(m[1]); ok {
			return call(contracts.ToolSetRule, contracts.SetRuleArgs{Pattern: p, Category: categoryWords(m[2])}), true
		}
	}
	if m := deleteRuleRe.FindStringSubmatch(text); m != nil {
		if p, ok := patternWords(m[1] + m[2]); ok {
			return call(contracts.ToolDeleteRule, contracts.DeleteRuleArgs{Pattern: p}), true
		}
	}
	if m := stopFilingRe.FindStringSubmatch(text); m != nil {
		if p, ok := patternWords(m[1]); ok {
			return call(contracts.ToolDeleteRule, contracts.DeleteRuleArgs{Pattern: p}), true
		}
	}
	for _, re := range []*pattern{fileUnderRe, onesAreRe} {
		if m := re.FindStringSubmatch(text); m != nil {
			if p, ok := patternWords(m[1]); ok {
				args := contracts.RecategorizeArgs{Pattern: p, Category: categoryWords(m[2])}
				if c, period, ok := strings.Cut(periodSplit.ReplaceAllString(args.Category, "\x00$1"), "\x00"); ok {
					r := rangeOf(period, now)
					args.Category, args.Range = strings.TrimSuffix(strings.TrimSpace(c), " category"), &r
				}
				return call(contracts.ToolRecategorize, args), true
			}
		}
	}
	if m := addCategoryRe.FindStringSubmatch(text); m != nil {
		return call(contracts.ToolAddCategory, contracts.AddCategoryArgs{Name: categoryWords(m[1])}), true
	}
	if listCatsRe.MatchString(text) && !spendRe.MatchString(text) {
		return call(contracts.ToolListCategories, contracts.ListCategoriesArgs{}), true
	}
	if listRulesRe.MatchString(text) {
		return call(contracts.ToolListRules, contracts.ListRulesArgs{}), true
	}
	return orchestrator.Decision{}, false
}

// patternWords is the merchant or description a request names, without
// quotes and the words around it ("all", "my", "the ... ones").
func patternWords(s string) (string, bool) {
	s = strings.Trim(strings.TrimSpace(s), `'"`)
	for _, w := range []string{"all of my ", "all of the ", "all my ", "all the ", "all ", "my ", "the ", "any "} {
		if len(s) > len(w) && strings.EqualFold(s[:len(w)], w) {
			s = s[len(w):]
			break
		}
	}
	for _, w := range []string{" ones", " payments", " transactions", " entries", " expenses", " purchases", " stuff"} {
		if len(s) > len(w) && strings.EqualFold(s[len(s)-len(w):], w) {
			s = s[:len(s)-len(w)]
			break
		}
	}
	s = strings.ToLower(strings.Trim(strings.TrimSpace(s), `'"`))
	if len([]rune(s)) < 2 || len([]rune(s)) > 100 || notAPattern.MatchString(s) || strings.ContainsAny(s, "£$€¥") {
		return "", false
	}
	return s, true
}

func categoryWords(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.Trim(s, `'" `)), " "))
}
