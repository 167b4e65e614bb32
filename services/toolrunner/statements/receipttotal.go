package statements

import (
	"math/big"
	"slices"
	"strings"
)

// What each line of a receipt is, told by its words in English, German,
// French, Spanish, Dutch and Japanese (folded: lower case, no accents).
// Phrases of several words match whole words in order.
var (
	totalStrongWords = []string{"summe", "gesamtsumme", "endsumme", "gesamt", "zu zahlen", "total", "grand total", "amount due",
		"balance due", "total due", "total ttc", "tot ttc", "net a payer", "montant ttc", "total a pagar", "importe total", "a pagar", "totaal",
		"te betalen", "totaalbedrag", "合計", "お買上計", "お買上げ計", "総合計", "お会計", "ご請求額", "合計金額", "お買上", "お買い上げ"}
	totalWeakWords = []string{"betrag", "gesamtbetrag", "endbetrag", "rechnungsbetrag", "importe", "montant", "amount", "balance",
		"bedrag", "a payer", "payer", "sum", "請求", "お支払"}
	// A total qualified by these is not what was paid.
	notTotalWords = []string{"sub", "subtotal", "subtotaal", "zwischensumme", "sous", "soustotal", "ht", "netto", "net", "excl",
		"exkl", "exclusief", "sin", "base", "imponible", "items", "item", "artikel", "articles", "article", "anzahl", "qty", "stuck",
		"点数", "rabatt", "discount", "korting", "remise", "descuento", "savings", "saved", "save", "ersparnis", "gespart", "ahorro",
		"bespaard", "punkte", "points", "punten", "puntos", "payback", "umsatz", "monatsumsatz", "coupon", "bonus", "vorteil",
		"小計", "pfand", "leergut", "statiegeld", "consigne", "envases", "weight", "gewicht", "stuks", "unidades", "articulos"}
	taxWords       = []string{"mwst", "ust", "steuer", "tax", "tva", "iva", "btw", "vat", "消費税", "内税", "外税", "税"}
	inclusiveWords = []string{"incl", "inkl", "ttc", "including", "inclusief", "inclus", "incluido", "税込", "brutto"}
	tenderWords    = []string{"geg", "gegeben", "bar", "ec", "cash", "girocard", "karte", "kartenzahlung", "mastercard", "visa",
		"amex", "maestro", "vpay", "debit", "credit", "card", "carte", "cb", "especes", "cheque", "efectivo", "tarjeta", "entregado",
		"contant", "contante", "pin", "pinnen", "betaald", "ideal", "paypal", "paid", "tendered", "bezahlt", "paiement", "pago",
		"お預り", "お預かり", "預り", "クレジット", "現金", "電子マネー"}
	cashWords     = []string{"bar", "cash", "especes", "efectivo", "contant", "contante", "entregado", "tendered", "現金", "お預り", "お預かり", "預り"}
	changeWords   = []string{"ruckgeld", "wechselgeld", "change", "rendu", "monnaie", "a rendre", "cambio", "vuelta", "devolucion", "wisselgeld", "terug", "retour", "お釣り", "おつり", "釣銭", "お釣"}
	cashbackWords = []string{"auszahlung", "cashback", "cash back", "cash out", "retrait", "geldopname"}
	tipWords      = []string{"tip", "tips", "gratuity", "trinkgeld", "pourboire", "propina", "fooi", "チップ"}
	savingsWords  = []string{"vorteil", "vorteile", "savings", "saved", "ersparnis", "gespart", "bespaard", "economise", "economie", "economies", "ahorro", "ahorrado", "ahorrado"}
)

// hasWord: a phrase's words appear in a line's words in order and side
// by side. CJK phrases match inside a run of CJK text, which has no
// spaces between words. OCR's one-letter slips in a long keyword
// ("SUMNE") are forgiven when fuzzy.
func hasWord(words []string, phrase string, fuzzy bool) bool {
	ps := strings.Fields(phrase)
	if len(ps) == 1 && isCJK([]rune(ps[0])[0]) {
		for _, w := range words {
			if strings.Contains(w, ps[0]) {
				return true
			}
		}
		return false
	}
	// A compound ending in a long keyword ("Factuurtotaal",
	// "Rechnungssumme"), or one a PDF glued to its currency
	// ("FactuurtotaalEUR").
	if fuzzy && len(ps) == 1 && len(ps[0]) >= 5 {
		for _, w := range words {
			w = strings.TrimSuffix(strings.TrimSuffix(w, "eur"), "chf")
			if len(w) > len(ps[0])+2 && strings.HasSuffix(w, ps[0]) {
				return true
			}
		}
	}
	for i := 0; i+len(ps) <= len(words); i++ {
		ok := true
		for j, p := range ps {
			w := words[i+j]
			if w != p && !(fuzzy && len(p) >= 5 && len(ps) == 1 && len(w) == len(p) && editDistance(w, p, 1) <= 1) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func hasAny(words []string, phrases []string, fuzzy bool) bool {
	for _, p := range phrases {
		if hasWord(words, p, fuzzy) {
			return true
		}
	}
	return false
}

// Line roles.
const (
	roleNone = iota
	roleTotal
	roleTotalWeak
	roleTender
	roleChange
	roleCashback
	roleTip
	roleTax
	roleNotTotal // a subtotal, a count, savings
)

func (l rline) role() int {
	w := l.words
	switch {
	case hasAny(w, tipWords, false):
		return roleTip
	case hasAny(w, cashbackWords, false):
		return roleCashback
	case hasAny(w, changeWords, false):
		return roleChange
	}
	strong := hasAny(w, totalStrongWords, true)
	weak := hasAny(w, totalWeakWords, false)
	tax := hasAny(w, taxWords, false) && !hasAny(w, inclusiveWords, false)
	switch {
	case (strong || weak) && (hasAny(w, notTotalWords, false) || tax):
		return roleNotTotal
	case strong && !hasAny(w, tenderWords, false):
		return roleTotal
	case hasAny(w, tenderWords, false):
		return roleTender
	case weak:
		return roleTotalWeak
	case tax:
		return roleTax
	}
	return roleNone
}

// lineAmount is the amount a keyword line gives: its only one, the last
// of two ("Subtotal 3 items 12,50"), the last of a table row's three or
// more (net, tax, gross).
func (l rline) lineAmount() (ramount, bool) {
	if len(l.amounts) == 0 {
		return ramount{}, false
	}
	return l.amounts[len(l.amounts)-1], true
}

// onlyAmount: the line is an amount and nothing else (a total printed
// on the line below its keyword).
func (l rline) onlyAmount() bool {
	if len(l.amounts) != 1 {
		return false
	}
	for _, w := range l.words {
		if !isCurrency(strings.ToUpper(w)) && w != "円" {
			return false
		}
	}
	return true
}

type totalPick struct {
	ok       bool
	val      *big.Rat
	decimals int
	ccy      string
	line     int // the total's line, or -1
	notes    []string
}

type tcand struct {
	line  int
	amt   ramount
	score int
}

// total decides the receipt's total.
func (rd *receiptReader) total(ccy string) totalPick {
	var cands []tcand
	var tenders, changes, cashbacks []ramount
	cashTender := false
	tipLine, tipAmt := -1, ramount{}
	keyLineAfterTip := false
	accept := func(a ramount) bool {
		return a.decimals > 0 || a.yen || a.ccy != "" || minorUnits(ccy) == 0 && ccy != ""
	}
	for i, l := range rd.lines {
		role := l.role()
		a, has := l.lineAmount()
		if has && !accept(a) {
			has = false
		}
		// A keyword line without an amount takes the next line's, when
		// that is an amount alone.
		if !has && (role == roleTotal || role == roleTotalWeak) && i+1 < len(rd.lines) && rd.lines[i+1].onlyAmount() {
			a, has = rd.lines[i+1].amounts[0], accept(rd.lines[i+1].amounts[0])
		}
		switch role {
		case roleTip:
			// "Gratuity not included" is a notice at the head, not
			// the line the tip is written on.
			if !has && hasAny(l.words, []string{"not", "nicht", "non", "no", "niet", "pas", "included", "inclus", "incluida", "incluido", "inbegriffen"}, false) {
				continue
			}
			if tipLine < 0 {
				tipLine = i
				if has {
					tipAmt = a
				}
			}
		case roleTotal, roleTotalWeak:
			if tipLine >= 0 && i > tipLine {
				keyLineAfterTip = true
			}
			if !has || a.val.Sign() <= 0 {
				continue
			}
			score := 3
			if role == roleTotalWeak {
				score = 2
			}
			if len(l.amounts) >= 3 {
				score = 1 // a tax table's gross column
			}
			if rd.inSavings(i) {
				score -= 3
			}
			cands = append(cands, tcand{line: i, amt: a, score: score})
		case roleTender:
			if has && a.val.Sign() > 0 {
				tenders = append(tenders, a)
				if hasAny(l.words, cashWords, false) {
					cashTender = true
				}
			}
		case roleChange:
			if has {
				changes = append(changes, absAmount(a))
			}
		case roleCashback:
			if has {
				cashbacks = append(cashbacks, absAmount(a))
			}
		}
	}
	paid := sumAmounts(tenders)
	paid.Sub(paid, sumAmounts(changes))
	paid.Sub(paid, sumAmounts(cashbacks))
	for i := range cands {
		v := cands[i].amt.val
		switch {
		case len(tenders) > 0 && v.Cmp(paid) == 0:
			cands[i].score += 2
		case len(changes) == 0 && len(cashbacks) == 0 && containsAmount(tenders, v):
			cands[i].score++
		}
	}
	pick := func(from, to int) (tcand, bool) {
		var best tcand
		found := false
		for _, c := range cands {
			if c.line < from || c.line >= to {
				continue
			}
			if !found || c.score > best.score {
				best, found = c, true
			}
		}
		return best, found
	}
	out := totalPick{line: -1}
	set := func(a ramount, line int) {
		out.ok, out.val, out.decimals, out.ccy, out.line = true, a.val, a.decimals, a.ccy, line
	}
	if tipLine >= 0 {
		return rd.totalWithTip(cands, tipLine, tipAmt, keyLineAfterTip, pick)
	}
	if c, ok := pick(0, len(rd.lines)); ok && c.score > 0 {
		set(c.amt, c.line)
		return out
	}
	// No total line: the payment lines say what was paid, when they
	// say it whole (a card, or cash given with its change).
	if len(tenders) > 0 && paid.Sign() > 0 && (!cashTender || len(changes) > 0) {
		a := tenders[0]
		a.val = paid
		set(a, -1)
		out.notes = append(out.notes, "no total line could be read; the total is what the payment lines add up to, check it")
		return out
	}
	if a, line, why, ok := rd.unnamedTotal(ccy); ok {
		set(a, line)
		out.notes = append(out.notes, why)
		return out
	}
	out.notes = append(out.notes, "no total found")
	return out
}

// unnamedTotal finds the total when no line names it: OCR reads the
// big double-height 合計 of a Japanese till, or a logo-sized TOTAL, as
// stray letters ("Sat ¥4,389"). The total is then the amount, below the
// subtotal, that is the subtotal plus its tax, or else the amount printed
// larger than the rest of the receipt; why says which, for Unsure.
func (rd *receiptReader) unnamedTotal(ccy string) (ramount, int, string, bool) {
	marked := func(a ramount) bool {
		return a.val.Sign() > 0 && (a.yen || a.ccy != "" || a.dollar || a.decimals > 0 && minorUnits(ccy) > 0)
	}
	// The subtotal and the tax added to it.
	sub, subLine := ramount{}, -1
	for i, l := range rd.lines {
		a, ok := l.lineAmount()
		if !ok || a.val.Sign() <= 0 {
			continue
		}
		if subLine < 0 && hasAny(l.words, []string{"sub", "subtotal", "subtotaal", "zwischensumme", "sous", "soustotal", "小計"}, false) {
			sub, subLine = a, i
			continue
		}
		if subLine < 0 || !hasAny(l.words, taxWords, false) {
			continue
		}
		if hasAny(l.words, inclusiveWords, false) || hasAny(l.words, []string{"内税", "内消費税", "対象", "対象額"}, false) {
			continue // tax included in the subtotal, or the base it is on
		}
		want := new(big.Rat).Add(sub.val, a.val)
		for j := i + 1; j < min(len(rd.lines), i+6); j++ {
			lj := rd.lines[j]
			if b, ok := lj.lineAmount(); ok && marked(b) && b.val.Cmp(want) == 0 && lj.role() != roleTax {
				return b, j, "no total line could be read; the total is the amount that is the subtotal (" + sub.raw + ") plus its tax (" + a.raw + "), check it", true
			}
		}
	}
	// The amount printed largest, when it stands out from the rest; on
	// a receipt whose words were not read, only one a currency marks.
	if len(rd.lines) < 5 {
		return ramount{}, 0, "", false
	}
	sizes := make([]float64, 0, len(rd.lines))
	for _, l := range rd.lines {
		sizes = append(sizes, l.size)
	}
	slices.Sort(sizes)
	median := sizes[len(sizes)/2]
	best, bestLine := ramount{}, -1
	for i, l := range rd.lines {
		a, ok := l.lineAmount()
		if rd.lang == "" && !a.yen && !a.dollar && a.ccy == "" {
			continue
		}
		if !ok || !marked(a) || l.size < median*1.5 || l.role() == roleTax || l.role() == roleNotTotal || l.role() == roleChange {
			continue
		}
		if bestLine < 0 || l.size > rd.lines[bestLine].size {
			best, bestLine = a, i
		}
	}
	if bestLine < 0 {
		return ramount{}, 0, "", false
	}
	return best, bestLine, "no total line could be read; the total is the amount printed largest (" + best.raw + "), check it", true
}

// totalWithTip decides the total of a receipt with a tip line: the total
// written after the tip (by hand, often) when it can be read, checked
// against the printed total plus the tip.
func (rd *receiptReader) totalWithTip(cands []tcand, tipLine int, tip ramount, keyAfter bool, pick func(int, int) (tcand, bool)) totalPick {
	out := totalPick{line: -1}
	pre, preOK := pick(0, tipLine)
	// A restaurant's slip prints the bill before the tip as its
	// subtotal ("AMOUNT 40.48", "TAX 3.34", "SUBTOTAL $ 43.82", then
	// "TIP" and "TOTAL" to be filled in by hand).
	if !preOK || rd.lines[pre.line].role() != roleTotal {
		from := 0
		if preOK {
			from = pre.line + 1
		}
		for i := tipLine - 1; i >= max(from, tipLine-4); i-- {
			l := rd.lines[i]
			if a, ok := l.lineAmount(); ok && a.val.Sign() > 0 && hasAny(l.words, []string{"subtotal", "sub"}, false) {
				pre, preOK = tcand{line: i, amt: a, score: 1}, true
				break
			}
		}
	}
	var post tcand
	postOK := false
	for _, c := range cands {
		if c.line > tipLine && c.score > 0 {
			post, postOK = c, true // the last one
		}
	}
	set := func(a ramount, line int) {
		out.ok, out.val, out.decimals, out.ccy, out.line = true, a.val, a.decimals, a.ccy, line
	}
	tipRead := tip.val != nil
	switch {
	case postOK:
		set(post.amt, post.line)
		if preOK && tipRead {
			want := new(big.Rat).Add(pre.amt.val, tip.val)
			if want.Cmp(post.amt.val) != 0 {
				out.notes = append(out.notes, "the total after the tip ("+post.amt.raw+") is not the printed total ("+pre.amt.raw+") plus the tip ("+tip.raw+"); check it")
			}
		} else if preOK && post.amt.val.Cmp(pre.amt.val) != 0 {
			out.notes = append(out.notes, "a tip was added by hand: the total "+post.amt.raw+" was read after it (the printed total is "+pre.amt.raw+"); check it")
		}
	case preOK && tipRead && keyAfter:
		a := pre.amt
		a.val = new(big.Rat).Add(pre.amt.val, tip.val)
		a.decimals = max(pre.amt.decimals, tip.decimals)
		set(a, pre.line)
		out.notes = append(out.notes, "the total written after the tip could not be read; it is taken as the printed total plus the tip, check it")
	case preOK && keyAfter:
		out.notes = append(out.notes, "a tip and a total were written by hand and could not be read; the printed total before the tip is "+pre.amt.raw)
	case preOK && tipRead:
		a := pre.amt
		a.val = new(big.Rat).Add(pre.amt.val, tip.val)
		a.decimals = max(pre.amt.decimals, tip.decimals)
		set(a, pre.line)
		out.notes = append(out.notes, "the total includes the tip ("+tip.raw+") added to the printed total ("+pre.amt.raw+"); check it")
	case preOK:
		set(pre.amt, pre.line)
		out.notes = append(out.notes, "the tip line is blank or unreadable; the total before any tip is given, check it")
	default:
		out.notes = append(out.notes, "no total found")
	}
	return out
}

// inSavings: the line is in a block about savings or loyalty points (an
// eBon's "Ihre Vorteile heute ... Summe 0,70"), which sums what was
// saved, not what was paid.
func (rd *receiptReader) inSavings(i int) bool {
	for j := max(0, i-4); j <= i; j++ {
		if hasAny(rd.lines[j].words, savingsWords, false) {
			return true
		}
	}
	return false
}

func absAmount(a ramount) ramount {
	a.val = new(big.Rat).Abs(a.val)
	return a
}

func sumAmounts(as []ramount) *big.Rat {
	s := new(big.Rat)
	for _, a := range as {
		s.Add(s, a.val)
	}
	return s
}

func containsAmount(as []ramount, v *big.Rat) bool {
	for _, a := range as {
		if a.val.Cmp(v) == 0 {
			return true
		}
	}
	return false
}
