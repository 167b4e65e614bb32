package store

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/purser-ai/purser/internal/wording"
)

// Bounds on what a query becomes: a longer query is cut, never refused.
const (
	maxQueryTerms = 16
	maxTermBytes  = 64
)

// searchWords folds s into the words the lexical index holds: accents
// taken off (NFD, combining marks dropped), lower case, split at anything
// that is not a letter or a digit. Both engines index and query these
// words, so both find the same rows; no character of s survives that an
// FTS5 or tsquery parser could read as an operator.
func searchWords(s string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			w := b.String()
			if len(w) > maxTermBytes {
				w = wording.CutBytes(w, maxTermBytes)
			}
			words = append(words, w)
			b.Reset()
		}
	}
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// An accent (or another combining mark) belongs to its letter.
		case r == 'ß':
			b.WriteString("ss")
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return words
}

// queryStopWords are words of a request that say how to search, not what
// for ("find my payments to Tesco"): dropped unless nothing else is left.
var queryStopWords = map[string]bool{
	"a": true, "an": true, "the": true, "my": true, "me": true, "i": true, "to": true, "from": true, "for": true,
	"of": true, "in": true, "on": true, "at": true, "and": true, "or": true, "with": true, "find": true, "search": true,
	"show": true, "where": true, "did": true, "do": true, "what": true, "all": true, "any": true, "is": true, "was": true,
	"pay": true, "paid": true, "payment": true, "payments": true, "spent": true, "spend": true, "bought": true,
	"transaction": true, "transactions": true, "purchase": true, "purchases": true,
}

// queryTerms is what the lexical index is asked for: the query's words,
// request words dropped, a plural's s taken off (each term matches as a
// prefix, so "receipt" still finds "receipts"), each once, at most
// maxQueryTerms. Empty when the query holds no word.
func queryTerms(q string) []string {
	if len(q) > 4*maxQueryTerms*maxTermBytes {
		q = wording.CutBytes(q, 4*maxQueryTerms*maxTermBytes)
	}
	words := searchWords(q)
	var kept []string
	for _, w := range words {
		if !queryStopWords[w] {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		kept = words
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range kept {
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxQueryTerms {
			break
		}
	}
	return out
}

// merchantAliases maps words that banks print for a merchant (card
// processors' abbreviations, a tax office's initials) to the names a
// person searches for. The indexer adds the names beside the printed
// words, so "amazon" finds "AMZN Mktp" and "tax office" finds "HMRC";
// the printed words stay findable too.
var merchantAliases = map[string]string{
	"amzn":            "amazon",
	"mktp":            "marketplace",
	"sbux":            "starbucks",
	"wm":              "walmart",
	"walmartcom":      "walmart",
	"wholefds":        "whole foods",
	"pypl":            "paypal",
	"goog":            "google",
	"msft":            "microsoft",
	"appl":            "apple",
	"itunes":          "apple",
	"tfl":             "transport for london",
	"hmrc":            "tax office revenue",
	"irs":             "tax office revenue",
	"usataxpymt":      "irs tax office",
	"finanzamt":       "tax office",
	"dgfip":           "tax office impots",
	"impots":          "tax office",
	"agenzia":         "tax office",
	"belastingdienst": "tax office",
	"skatteverket":    "tax office",
	"ato":             "tax office",
	"cra":             "tax office revenue",
}

// merchantWords is what the index adds for the words of a merchant or
// description: the names merchantAliases gives its words, and the word a
// dotted or starred merchant ("AMZN.COM*2K3") spells without its marks.
func merchantWords(words []string) []string {
	var out []string
	for i, w := range words {
		if name, ok := merchantAliases[w]; ok {
			out = append(out, strings.Fields(name)...)
		}
		if i+1 < len(words) {
			if name, ok := merchantAliases[w+words[i+1]]; ok {
				out = append(out, strings.Fields(name)...)
			}
		}
	}
	return out
}

// searchBody joins the folded words of parts, with the merchant names
// their words stand for, into the text the index reads.
func searchBody(parts ...string) string {
	var words []string
	for _, p := range parts {
		words = append(words, searchWords(p)...)
	}
	words = append(words, merchantWords(words)...)
	return strings.Join(words, " ")
}

// termAlias is what a query term also matches: the names merchantAliases
// gives it ("amzn" finds "AMAZON MARKETPLACE"), all of them; nil if none.
func termAlias(t string) []string {
	if name, ok := merchantAliases[t]; ok {
		return strings.Fields(name)
	}
	return nil
}

// fts5Match is queryTerms as an FTS5 query: each term a quoted prefix
// ("tesco"*), or its alias's words, all of them (join " AND ") or any
// (join " OR "). Terms are letters and digits only (searchWords), so
// quoting cannot be escaped.
func fts5Match(terms []string, join string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + t + `"*`
		if alias := termAlias(t); alias != nil {
			parts[i] = "(" + parts[i] + ` OR ("` + strings.Join(alias, `"* AND "`) + `"*))`
		}
	}
	return strings.Join(parts, join)
}

// tsQuery is queryTerms as a Postgres tsquery: each term a quoted prefix
// ('tesco':*), or its alias's words, joined by & (all) or | (any).
func tsQuery(terms []string, join string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "'" + t + "':*"
		if alias := termAlias(t); alias != nil {
			parts[i] = "(" + parts[i] + " | ('" + strings.Join(alias, "':* & '") + "':*))"
		}
	}
	return strings.Join(parts, " "+join+" ")
}
