package statements

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Who was paid, in what currency, and for what: the shop's name from the
// head of the receipt (or a chain's name anywhere on it), the currency
// from its codes and symbols (or, when none is printed, its language),
// and the priced lines above the total.

// langWords are words that mark a receipt's language.
var langWords = map[string][]string{
	"de": {"summe", "mwst", "steuer", "datum", "uhr", "geg", "ruckgeld", "betrag", "kasse", "netto", "brutto", "gesamt", "vielen", "dank", "einkauf", "bon", "stk", "rabatt", "kundenbeleg", "strasse", "str", "zwischensumme"},
	"fr": {"ttc", "tva", "merci", "montant", "especes", "rendu", "payer", "articles", "caisse", "ticket", "facture", "rue", "visite", "carte", "bancaire", "sous"},
	"es": {"iva", "importe", "efectivo", "cambio", "gracias", "factura", "fecha", "pagar", "tarjeta", "entregado", "ticket", "calle", "simplificada", "base", "imponible"},
	"nl": {"totaal", "btw", "bedankt", "wisselgeld", "pinnen", "factuur", "betalen", "subtotaal", "bedrag", "kassa", "bonnummer", "straat", "korting", "betaald", "artikel"},
	"en": {"total", "tax", "change", "thank", "you", "subtotal", "cash", "card", "amount", "due", "balance", "items", "street", "receipt", "store", "sales", "visit"},
}

// receiptLanguage is the language most of the receipt's words are in;
// Japanese when it has kana.
func receiptLanguage(lines []rline) string {
	kana, counts := 0, map[string]int{}
	for _, l := range lines {
		for _, r := range l.text {
			if unicode.In(r, unicode.Hiragana, unicode.Katakana) {
				kana++
			}
		}
		for lang, ws := range langWords {
			for _, w := range l.words {
				if slices.Contains(ws, w) {
					counts[lang]++
				}
			}
		}
	}
	if kana >= 3 {
		return "ja"
	}
	best, n := "", 0
	for _, lang := range []string{"de", "fr", "es", "nl", "en"} {
		if counts[lang] > n {
			best, n = lang, counts[lang]
		}
	}
	if n < 2 {
		return ""
	}
	return best
}

// languageCurrencies are the currencies a language's receipts are
// mostly in, the likeliest first.
var languageCurrencies = map[string][]string{
	"de": {"EUR", "CHF"}, "fr": {"EUR", "CHF", "CAD"}, "es": {"EUR", "MXN", "ARS", "COP", "CLP"}, "nl": {"EUR"}, "ja": {"JPY"},
	"en": {"USD", "GBP", "CAD", "AUD", "NZD", "IEP"},
}

var reCurrencyCode = regexp.MustCompile(`\b[A-Z]{3}\b`)

// countryHints are what a Spanish-speaking country's receipts print by
// law (its tax authority, its tax id's name, its tax status), which says
// the country, and so the currency, of a receipt that prints only "$" or
// nothing: a Latin-American receipt is not in euros.
var countryHints = []struct {
	ccy   string
	words []string
}{
	{"ARS", []string{"cuit", "afip", "arca", "iva responsable inscripto", "responsable inscripto", "ing brutos", "ingresos brutos", "monotributo"}},
	{"MXN", []string{"rfc", "sat", "cfdi", "regimen fiscal"}},
	{"CLP", []string{"rut", "sii", "boleta electronica"}},
	{"COP", []string{"nit", "dian"}},
	{"PEN", []string{"ruc", "sunat"}},
}

// countryCurrency is the currency a Spanish receipt's country hints
// name, and the hint, or "" when it names none or more than one country.
func (rd *receiptReader) countryCurrency() (string, string) {
	if rd.lang != "es" {
		return "", ""
	}
	found, why := "", ""
	for _, c := range countryHints {
		for _, l := range rd.lines {
			for _, w := range c.words {
				if !hasWord(l.words, w, false) {
					continue
				}
				if found != "" && found != c.ccy {
					return "", ""
				}
				if found == "" {
					found, why = c.ccy, strings.ToUpper(w)
				}
			}
		}
	}
	return found, why
}

// currency is the receipt's currency: the one its codes and symbols
// name most, else the one its language suggests, with a note saying so.
func (rd *receiptReader) currency() (string, string) {
	counts := map[string]int{}
	yen, dollar, japanese := 0, 0, rd.lang == "ja"
	for _, l := range rd.lines {
		for _, a := range l.amounts {
			switch {
			case a.ccy != "":
				counts[a.ccy] += 2
			case a.yen:
				yen += 2
			case a.dollar:
				dollar += 2
			}
		}
		for _, c := range reCurrencyCode.FindAllString(l.text, -1) {
			if c != "EUR" && c != "USD" && c != "GBP" && c != "CHF" && c != "JPY" && len(l.amounts) == 0 {
				continue // a code standing alone is only one of the common ones ("EUR" over a till's column)
			}
			if isCurrency(c) {
				counts[c]++
			}
		}
		if strings.Contains(l.text, "円") {
			yen++
		}
		for _, s := range symbols {
			if len(s.sym) < 3 && strings.Contains(l.text, s.sym) && len(l.amounts) == 0 {
				counts[s.ccy]++
			}
		}
	}
	// A lone ¥ on a receipt in a European language is OCR's reading of a
	// stray backslash or a smudge, not yen.
	if yen > 0 && rd.lang != "" && !japanese && yen < 4 {
		yen = 0
	}
	if yen > 0 {
		if japanese || rd.opts.Currency != "CNY" {
			counts["JPY"] += yen
		} else {
			counts["CNY"] += yen
		}
	}
	country, countryWhy := rd.countryCurrency()
	dollarNote := ""
	if dollar > 0 {
		d := "USD"
		switch {
		case dollarCurrencies[country]:
			d = country
			dollarNote = "$ read as " + country + ", as the receipt prints " + countryWhy + "; check it"
		case dollarCurrencies[strings.ToUpper(rd.opts.Currency)]:
			d = strings.ToUpper(rd.opts.Currency)
		}
		counts[d] += dollar
	}
	if best := mostCounted(counts); best != "" {
		if best == country {
			return best, dollarNote
		}
		return best, ""
	}
	if country != "" {
		return country, "currency not printed; assumed " + country + ", as the receipt prints " + countryWhy + "; check it"
	}
	def := strings.ToUpper(strings.TrimSpace(rd.opts.Currency))
	if !isCurrency(def) {
		def = ""
	}
	if cs := languageCurrencies[rd.lang]; len(cs) > 0 {
		if slices.Contains(cs, def) {
			return def, "currency not printed; assumed " + def + ", your default"
		}
		if rd.lang != "en" || def == "" {
			if rd.lang == "en" {
				return "", "currency not printed and no default currency is set"
			}
			return cs[0], "currency not printed; assumed " + cs[0] + " from the language"
		}
	}
	if def != "" {
		return def, "currency not printed; assumed " + def + ", your default"
	}
	return "", "currency not printed and no default currency is set"
}

// Chains whose name on a receipt is the brand, wherever it is printed
// (an eBon has its logo as a picture and its name only in the footer).
var chains = []string{"REWE", "PENNY", "ALDI", "LIDL", "EDEKA", "NETTO", "KAUFLAND", "ROSSMANN", "MÜLLER", "NORMA", "REAL",
	"CARREFOUR", "AUCHAN", "LECLERC", "INTERMARCHÉ", "MONOPRIX", "FRANPRIX", "CASINO", "MERCADONA", "EROSKI", "ALCAMPO",
	"ALBERT HEIJN", "JUMBO", "PLUS", "DIRK", "HEMA", "ACTION", "KRUIDVAT", "SPAR", "BILLA", "HOFER", "MIGROS", "COOP",
	"WALMART", "TARGET", "COSTCO", "KROGER", "SAFEWAY", "WALGREENS", "CVS", "TESCO", "SAINSBURY'S", "ASDA", "MORRISONS",
	"WAITROSE", "IKEA", "DECATHLON", "STARBUCKS", "MCDONALD'S", "セブン-イレブン", "ローソン", "ファミリーマート", "イオン"}

var (
	reCompanySuffix = regexp.MustCompile(`(?i)(?:\bgmbh|\bohg\b|\bag\b|\bkg\b|b\.\s?v\.|\bn\.\s?v\.|\bltd\b|\binc\b|\bllc\b|\bs\.\s?a\.|\bsarl\b|\bsas\b|\bs\.\s?l\.|\bplc\b|\bco\.|\be\.\s?k\.|株式会社|有限会社)`)
	reGluedSuffix   = regexp.MustCompile(`(\p{Ll})(B\.V\.|GmbH|N\.V\.)`)
	reAddressy      = regexp.MustCompile(`(?i)\b\d{4,5}\s+\p{L}|\b(?:str\.|stra(?:ss|ß)e|street|st\.|avenue|ave\.?|road|rd\.|rue|calle|avda|weg|laan|straat|plein|allee|platz|boulevard|blvd|suite)\b|\d+\s*(?:-\s*\d+)?$`)
	reNotNameLine   = regexp.MustCompile(`(?i)\b(?:tel|telefon|phone|fax|uid|ust|vat|btw|nif|cif|siret|siren|kvk|iban|bic|www|http|e-?mail|steuer-?nr|st-?nr|rechnung|factuur|facture|factura|invoice|receipt|quittung|kassenbon|beleg|ticket|recibo|welcome|willkommen|bienvenue|bienvenido|welkom|kundenbeleg|bon-?nr|kasse|filiale|markt:)\b|@|\.(?:de|com|nl|fr|es|jp)\b`)
)

// merchant is the shop's name: a chain's name where one is printed,
// else the first line at the head that is a name (not an address, a
// phone number, a heading or OCR's noise), preferring one with a company
// form (GmbH, B.V., Ltd).
func (rd *receiptReader) merchant() string {
	for i, l := range rd.lines {
		if c := chainIn(l.text, i < 8); c != "" {
			return c
		}
	}
	head := rd.lines[:min(len(rd.lines), 12)]
	first := ""
	for _, l := range head {
		if len(l.amounts) > 0 || !nameLike(l.text) {
			continue
		}
		name := cleanName(l.text)
		if reCompanySuffix.MatchString(name) {
			return name
		}
		if first == "" {
			first = name
		}
	}
	if first != "" {
		return first
	}
	for _, l := range rd.lines {
		if len(l.amounts) == 0 && nameLike(l.text) && reCompanySuffix.MatchString(l.text) {
			return cleanName(l.text)
		}
	}
	return ""
}

// chainIn is the chain a line names in capitals, its letters spaced
// out or not ("R E W E", "P E N N Y - M A R K T"). Chains named by a
// common word (Netto, Plus, Real, Spar) count only at the receipt's head
// (head), where a tax table's "NETTO" is not.
func chainIn(t string, head bool) string {
	up := closeLetterSpacing(t)
	for _, c := range chains {
		if commonWordChains[c] && !head {
			continue
		}
		i := strings.Index(up, c)
		if i < 0 {
			continue
		}
		j := i + len(c)
		before := i == 0 || !unicode.IsLetter(lastRune(up[:i]))
		after := j == len(up) || !unicode.IsLetter(firstRuneIn(up[j:]))
		if before && after || isCJK(firstRuneIn(c)) {
			return c
		}
	}
	return ""
}

var commonWordChains = map[string]bool{"NETTO": true, "PLUS": true, "REAL": true, "CASINO": true, "ACTION": true, "SPAR": true,
	"COOP": true, "TARGET": true, "DIRK": true, "JUMBO": true, "NORMA": true, "MÜLLER": true, "HEMA": true, "DIA": true}

func lastRune(s string) rune {
	r := []rune(s)
	return r[len(r)-1]
}

func firstRuneIn(s string) rune {
	for _, r := range s {
		return r
	}
	return 0
}

// closeLetterSpacing joins letters printed one apart: "R E W E" is REWE.
func closeLetterSpacing(t string) string {
	ws := strings.Fields(t)
	var out []string
	for i := 0; i < len(ws); {
		j := i
		for j < len(ws) && len([]rune(ws[j])) == 1 && (unicode.IsLetter([]rune(ws[j])[0]) || ws[j] == "-") {
			j++
		}
		if j-i >= 3 {
			out = append(out, strings.Join(ws[i:j], ""))
			i = j
			continue
		}
		out = append(out, ws[i])
		i++
	}
	return strings.Join(out, " ")
}

// nameLike: a line that can be a shop's name: words of letters, not an
// address, a phone number, a heading or noise.
func nameLike(t string) bool {
	if reNotNameLine.MatchString(t) || reAddressy.MatchString(t) {
		return false
	}
	letters, other, long := 0, 0, false
	for _, w := range strings.Fields(t) {
		n := 0
		for _, r := range w {
			if unicode.IsLetter(r) {
				n++
			}
		}
		if n >= 4 || n >= 2 && isCJK([]rune(w)[0]) {
			long = true
		}
	}
	for _, r := range t {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r != ' ':
			other++
		}
	}
	return long && letters >= 3 && letters >= 3*other
}

// cleanName trims a name's decoration ("*** NAME ***", "| NAME").
func cleanName(t string) string {
	t = closeLetterSpacing(t)
	t = strings.TrimFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != ')' })
	t = strings.TrimLeft(t, ".")
	t = reGluedSuffix.ReplaceAllString(t, "$1 $2")
	return strings.Join(strings.Fields(t), " ")
}

var reItemDetail = regexp.MustCompile(`(?i)^\s*[\d.,]+\s*(?:stk|st\b|kg|x\b|pcs|pc\b|uds?\b|stuks?)`)

// items are the priced lines above the total: a text and one amount, not
// a keyword's line nor a weight or quantity's detail.
func (rd *receiptReader) items(totalLine int) []ReceiptItem {
	end := totalLine
	if end < 0 {
		return nil
	}
	var out []ReceiptItem
	for _, l := range rd.lines[:end] {
		if len(l.amounts) == 0 || len(l.amounts) > 2 || l.role() != roleNone || reItemDetail.MatchString(l.text) {
			continue
		}
		a := l.amounts[len(l.amounts)-1]
		text := strings.TrimSpace(l.text[:a.pos])
		letters := 0
		for _, r := range text {
			if unicode.IsLetter(r) {
				letters++
			}
		}
		if letters < 2 {
			continue
		}
		out = append(out, ReceiptItem{Text: strings.Trim(text, " .:*|-"), Amount: a.raw})
		if len(out) >= 500 {
			break
		}
	}
	return out
}
