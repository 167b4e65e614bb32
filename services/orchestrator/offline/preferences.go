package offline

import (
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

var (
	// "set my currency to euros", "my default currency is CHF", "use dollars from now on"
	prefCurrencyRe = mustCompile(`(?i)\b(?:my\s+)?(?:default\s+)?currency\s+(?:is|to|should be|=)\s+([A-Za-z]{3,9})\b|\buse\s+([A-Za-z]{3,9})\s+(?:by default|from now on)\b`)
	// "my time zone is Europe/Paris", "set my timezone to America/New_York"
	prefZoneRe = mustCompile(`(?i)\btime\s?zone\s+(?:is|to|=)\s+([A-Za-z]+(?:/[A-Za-z_+-]+){1,2}|UTC)\b`)
	// "I write dates month first", "dates are day first"
	prefOrderRe = mustCompile(`(?i)\bdates?\b.*\b(day|month|year)[ -]first\b`)
	// "answer in French", "switch to English please", "réponds en
	// français", "my language is French": the language ends the request,
	// so "change 5 to english breakfast" is no such thing.
	prefLangRe = mustCompile(`(?i)(?:\b(?:answer|reply|respond|speak|talk|switch)\b[^.?!]*?\b(?:in|to)|\b(?:r[ée]ponds|r[ée]pondez|r[ée]ponds-moi|parle|parlez|passe|passez)\b[^.?!]*?\ben|\blanguage\s+(?:is|to|=))\s+(english|french|anglais|fran[cç]ais)\s*(?:please|from now on|instead|s'il te pla[iî]t|s'il vous pla[iî]t|d[ée]sormais)?\s*[.!]?$`)
)

// languages are the languages purser answers in, by the names people use.
var languages = map[string]string{"english": "en", "anglais": "en", "french": "fr", "français": "fr", "francais": "fr"}

// preferences reads a change of the user's own defaults.
func preferences(text string) (orchestrator.Decision, bool) {
	var args contracts.SetPreferencesArgs
	if m := prefCurrencyRe.FindStringSubmatch(text); m != nil {
		w := m[1] + m[2]
		code, ok := wordCurrency[strings.ToLower(w)]
		if !ok && contracts.ValidCurrency(strings.ToUpper(w)) {
			code, ok = strings.ToUpper(w), true
		}
		if !ok {
			return clarify("Which currency do you mean? Give its code, such as EUR or USD."), true
		}
		args.Currency = &code
	}
	if m := prefZoneRe.FindStringSubmatch(text); m != nil {
		if _, err := contracts.LoadZone(m[1]); err != nil || m[1] == "Local" {
			return clarify("Which time zone do you mean? Give its name, such as Europe/London or America/New_York."), true
		}
		zone := m[1]
		args.Timezone = &zone
	}
	if m := prefOrderRe.FindStringSubmatch(text); m != nil {
		order := map[string]string{"day": "dmy", "month": "mdy", "year": "ymd"}[strings.ToLower(m[1])]
		args.DateOrder = &order
	}
	if m := prefLangRe.FindStringSubmatch(text); m != nil {
		lang := languages[strings.ToLower(m[1])]
		args.Language = &lang
	}
	if args.Currency == nil && args.Timezone == nil && args.DateOrder == nil && args.Language == nil {
		return orchestrator.Decision{}, false
	}
	return call(contracts.ToolSetPreferences, args), true
}
