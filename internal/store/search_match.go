package store

import "strings"

// SearchTermsOf is what a search asks the index for, the query's folded
// words (see queryTerms): a look back through one conversation matches
// messages with them, so that it and a search of messages agree on what
// the same words find.
func SearchTermsOf(query string) []string { return queryTerms(query) }

// TextMatches says whether text holds terms as the lexical index matches
// them: each term the start of one of text's folded words; every term
// (all) or any.
func TextMatches(text string, terms []string, all bool) bool {
	words := searchWords(text)
	for _, t := range terms {
		found := false
		for _, w := range words {
			if strings.HasPrefix(w, t) {
				found = true
				break
			}
		}
		if found && !all {
			return true
		}
		if !found && all {
			return false
		}
	}
	return all
}
