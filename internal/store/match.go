package store

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// descriptionNoise are words a bank puts around a merchant's name that
// say nothing of what was bought: they never make two descriptions
// compatible.
var descriptionNoise = map[string]bool{
	"card": true, "payment": true, "pos": true, "purchase": true, "debit": true, "credit": true, "contactless": true,
	"visa": true, "mastercard": true, "maestro": true, "amex": true, "paypal": true, "sepa": true, "direct": true,
	"transfer": true, "standing": true, "order": true, "ref": true, "reference": true, "online": true, "www": true,
	"com": true, "ltd": true, "limited": true, "plc": true, "inc": true, "gmbh": true, "the": true, "and": true,
	"for": true, "from": true, "with": true, "at": true, "to": true, "on": true, "in": true, "of": true,
	"gbp": true, "eur": true, "usd": true, "chf": true, "dkk": true, "sek": true, "nok": true, "pln": true,
	"london": true, "uk": true, "gb": true, "fpi": true, "bgc": true, "dd": true, "so": true, "tfr": true,
}

// descriptionWords are the words of a description that can name what was
// paid for: case and accents folded, digits and punctuation dropped, and
// merchant noise ("CARD PAYMENT", "POS", currency codes) left out.
func descriptionWords(s string) []string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// an accent, folded away
		case unicode.IsLetter(r):
			b.WriteRune(r)
		default:
			b.WriteRune(' ')
		}
	}
	var out []string
	for _, w := range strings.Fields(b.String()) {
		if len([]rune(w)) >= 2 && !descriptionNoise[w] {
			out = append(out, w)
		}
	}
	return out
}

// CompatibleDescriptions reports whether an expense typed by hand and a
// bank line may well be one purchase by their words: after normalising
// (descriptionWords), they share a word, or a word of one begins a word
// of the other and is at least four letters ("sainsbury" and
// "sainsburys"). A description with no words left is compatible with
// nothing.
func CompatibleDescriptions(typed, bank string) bool {
	tw, bw := descriptionWords(typed), descriptionWords(bank)
	for _, a := range tw {
		for _, b := range bw {
			short, long := a, b
			if len(short) > len(long) {
				short, long = long, short
			}
			if short == long || (len([]rune(short)) >= 4 && strings.HasPrefix(long, short)) {
				return true
			}
		}
	}
	return false
}
