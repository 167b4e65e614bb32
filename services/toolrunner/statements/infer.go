package statements

import (
	"math/big"
	"slices"
	"strings"
	"unicode"
)

// A file that names no currency may still say which it is in: the IBAN of
// its account, the language of its headers, its bank's name. Those come
// before the user's default (a Danish export is in kroner whatever the
// user's own currency), and the result says what it was taken from.

// ibanCountries are the IBAN countries with their length and the national
// currency of their accounts.
var ibanCountries = map[string]struct {
	length int
	ccy    string
}{
	"DK": {18, "DKK"}, "FO": {18, "DKK"}, "GL": {18, "DKK"}, "NO": {15, "NOK"}, "SE": {24, "SEK"}, "IS": {26, "ISK"},
	"PL": {28, "PLN"}, "CZ": {24, "CZK"}, "HU": {28, "HUF"}, "RO": {24, "RON"}, "BG": {22, "BGN"},
	"CH": {21, "CHF"}, "LI": {21, "CHF"}, "GB": {22, "GBP"},
	"DE": {22, "EUR"}, "FR": {27, "EUR"}, "NL": {18, "EUR"}, "BE": {16, "EUR"}, "AT": {20, "EUR"}, "ES": {24, "EUR"},
	"IT": {27, "EUR"}, "IE": {22, "EUR"}, "PT": {25, "EUR"}, "FI": {18, "EUR"}, "LU": {20, "EUR"}, "GR": {27, "EUR"},
	"SK": {24, "EUR"}, "SI": {19, "EUR"}, "EE": {20, "EUR"}, "LV": {21, "EUR"}, "LT": {20, "EUR"}, "MT": {31, "EUR"},
	"CY": {28, "EUR"}, "HR": {21, "EUR"},
}

// ibansIn finds the IBANs (checksum verified) written in a text, with or
// without spaces between groups.
func ibansIn(s string) []string {
	s = strings.ToUpper(s)
	var out []string
	for i := 0; i+4 <= len(s); i++ {
		if i > 0 && (isASCIIAlnum(s[i-1])) {
			continue
		}
		cc := s[i : i+2]
		c, ok := ibanCountries[cc]
		if !ok || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
			continue
		}
		var b strings.Builder
		j := i
		for ; j < len(s) && b.Len() < c.length; j++ {
			switch {
			case isASCIIAlnum(s[j]):
				b.WriteByte(s[j])
			case s[j] == ' ' && j+1 < len(s) && isASCIIAlnum(s[j+1]):
			default:
				j = len(s)
			}
		}
		if b.Len() == c.length && (j >= len(s) || !isASCIIAlnum(s[j])) && ibanValid(b.String()) {
			out = append(out, b.String())
		}
	}
	return out
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isASCIIAlnum(c byte) bool { return isDigit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') }

// ibanValid checks the IBAN's mod-97 check digits.
func ibanValid(iban string) bool {
	var digits strings.Builder
	for _, c := range iban[4:] + iban[:4] {
		switch {
		case c >= '0' && c <= '9':
			digits.WriteRune(c)
		case c >= 'A' && c <= 'Z':
			digits.WriteString(itoa(int(c-'A') + 10))
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// headerLanguages are header words that only one language uses, and the
// currency of the country that writes it. Languages spoken in countries
// of more than one currency (German, French, Dutch, Italian, Swedish in
// Finland aside) are not here: for them only an IBAN says.
var headerLanguages = []struct {
	language, ccy string
	words         []string
}{
	{"Danish", "DKK", []string{"beløb", "beloeb", "bogført", "bogføringsdato", "bogfoert", "posteringstekst"}},
	{"Norwegian", "NOK", []string{"beløp", "beloep", "bokført", "bokføringsdato", "inn på konto", "ut fra konto"}},
	{"Swedish", "SEK", []string{"belopp", "bokföringsdag", "bokföringsdatum", "bokförd", "transaktionsdag", "insättning", "reskontradatum"}},
	{"Polish", "PLN", []string{"kwota", "data operacji", "data księgowania", "opis operacji", "tytuł operacji"}},
	{"Czech", "CZK", []string{"částka", "zůstatek", "datum zaúčtování", "protiúčet"}},
	{"Hungarian", "HUF", []string{"összeg", "könyvelés dátuma", "egyenleg"}},
}

// bankNames are banks that keep accounts in one country's currency.
var bankNames = []struct{ name, ccy string }{
	{"jyske bank", "DKK"}, {"sydbank", "DKK"}, {"nykredit", "DKK"}, {"arbejdernes landsbank", "DKK"}, {"spar nord", "DKK"},
	{"sparebank 1", "NOK"}, {"sbanken", "NOK"}, {"dnb bank", "NOK"},
	{"länsförsäkringar bank", "SEK"}, {"skandiabanken", "SEK"},
	{"pko bank polski", "PLN"}, {"bank pekao", "PLN"}, {"santander bank polska", "PLN"}, {"mbank s.a", "PLN"},
	{"česká spořitelna", "CZK"}, {"komerční banka", "CZK"}, {"fio banka", "CZK"},
	{"postfinance", "CHF"}, {"zürcher kantonalbank", "CHF"}, {"ubs switzerland", "CHF"},
	{"otp bank", "HUF"},
}

// inferCurrency is the currency a file that names none points to, and
// what it was taken from in words; "" when nothing points to one. An IBAN
// in the preamble comes first (its country is the account's), then the
// header's language, then the bank's name.
func inferCurrency(header []string, preamble [][]string) (ccy, from string) {
	var text []string
	for _, r := range preamble {
		text = append(text, strings.Join(r, " "))
	}
	found := ""
	for _, t := range text {
		for _, iban := range ibansIn(t) {
			c := ibanCountries[iban[:2]].ccy
			if found != "" && found != c {
				found = "-"
			} else {
				found = c
				from = "the account's IBAN (" + iban[:2] + "…)"
			}
		}
	}
	if found != "" && found != "-" {
		return found, from
	}
	langs := map[int]bool{}
	for _, h := range header {
		h = strings.ToLower(strings.Trim(h, " \"'*"))
		for i, l := range headerLanguages {
			if slices.ContainsFunc(l.words, func(w string) bool { return wordIn(h, w) }) {
				langs[i] = true
			}
		}
	}
	if len(langs) == 1 {
		for i := range langs {
			l := headerLanguages[i]
			return l.ccy, "the file's " + l.language + " headers"
		}
	}
	lower := strings.ToLower(strings.Join(text, "\n"))
	found = ""
	for _, b := range bankNames {
		if strings.Contains(lower, b.name) {
			if found != "" && found != b.ccy {
				return "", ""
			}
			found, from = b.ccy, "the bank's name in the file"
		}
	}
	if found != "" {
		return found, from
	}
	return "", ""
}

// wordIn: w is in h with no letter on either side (in runes, so that
// "beløb" is not read in "beløbet").
func wordIn(h, w string) bool {
	for i := strings.Index(h, w); i >= 0; {
		before, after := true, true
		if i > 0 {
			r := []rune(h[:i])
			before = !unicode.IsLetter(r[len(r)-1])
		}
		if rest := h[i+len(w):]; rest != "" {
			after = !unicode.IsLetter([]rune(rest)[0])
		}
		if before && after {
			return true
		}
		j := strings.Index(h[i+1:], w)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}
