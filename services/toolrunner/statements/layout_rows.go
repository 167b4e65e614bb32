package statements

import (
	"math/big"
	"strings"
)

// buildRows walks the lines in order and makes the transactions, the
// balances printed between them, and the amounts seen but not taken
// (stray), by line.
func (t *layoutTable) buildRows() (rows []layoutRow, anchors []layoutAnchor, strays map[int][]layoutTok) {
	strays = map[int][]layoutTok{}
	var lastDate dateCell
	haveDate := false
	var pending *layoutRow // a row begun, its amount still to come
	lastRow := -1          // the row text lines continue
	lastY, lastPage := 0.0, 0
	inTable := false // the previous line belonged to the table
	dir := 0
	rowsOnPage := 0
	for i, l := range t.lines {
		if l.page != lastPage {
			pending, inTable, rowsOnPage, lastPage = nil, false, 0, l.page
		}
		near := inTable && lastY-l.y <= 2.5*t.pitch+0.5
		dated := t.datedAt(l)
		if dated {
			lastDate, _ = t.lineDate(l)
			haveDate = true
		}
		cls := lineClass(l.text)
		in, stray := t.amountsIn(l, false)
		if cls == lineOpening || cls == lineClosing {
			var v *big.Rat
			for c, tok := range in {
				if t.amtCols[c].kind == colBalance {
					v = tok.amt.signedValue()
				}
			}
			if v == nil {
				// The figure of a balance line in the summary, its last.
				for j := len(l.toks) - 1; j >= 0; j-- {
					if tok := l.toks[j]; tok.kind == tokAmount && !t.isFX(tok) {
						v = tok.amt.signedValue()
						break
					}
				}
			}
			if v != nil {
				anchors = append(anchors, layoutAnchor{after: len(rows), line: i, v: v, opening: cls == lineOpening})
			}
			pending, lastRow = nil, -1
			lastY, inTable = l.y, true
			continue
		}
		if cls == lineTotal && !dated {
			pending, lastRow, inTable = nil, -1, false
			continue
		}
		if t.headerLine(l) {
			pending, lastRow = nil, -1
			lastY, inTable = l.y, true
			continue
		}
		var txTok *layoutTok
		kind := 0
		var balTok *layoutTok
		for c := range t.amtCols {
			tok, ok := in[c]
			if !ok {
				continue
			}
			switch k := t.amtCols[c].kind; k {
			case colBalance:
				balTok = &tok
			default:
				if txTok == nil {
					txTok, kind = &tok, k
				} else {
					stray = append(stray, tok)
				}
			}
		}
		text := lineText(l, t)
		if txTok == nil {
			if len(stray) > 0 {
				strays[i] = stray
			}
			if balTok != nil {
				// A balance alone on its line closes what came before.
				anchors = append(anchors, layoutAnchor{after: len(rows), line: i, v: balTok.amt.signedValue()})
				pending, lastRow = nil, -1
				lastY, inTable = l.y, true
				continue
			}
			switch {
			case dated:
				pending = &layoutRow{date: lastDate, desc: text, dir: dir}
				lastY, inTable = l.y, true
			case len(l.toks) == 0:
			case l.toks[0].x0 < t.descX-1.5*max(l.size, 4):
				// Text left of the descriptions: a section's heading, or
				// not the table at all.
				s := strings.Join(text, " ")
				switch {
				case reSectionIn.MatchString(s):
					dir = 1
				case reSectionOut.MatchString(s):
					dir = -1
				}
				pending, lastRow, inTable = nil, -1, false
			case !near:
				pending, lastRow, inTable = nil, -1, false
				if !t.amountOn && haveDate {
					pending = &layoutRow{date: lastDate, desc: text, dir: dir}
					lastY, inTable = l.y, true
				}
			case pending != nil:
				pending.desc = append(pending.desc, text...)
				lastY = l.y
			case t.amountOn && lastRow >= 0:
				rows[lastRow].desc = append(rows[lastRow].desc, text...)
				lastY = l.y
			case !t.amountOn && haveDate:
				pending = &layoutRow{date: lastDate, desc: text, dir: dir}
				lastY = l.y
			}
			continue
		}
		if len(stray) > 0 {
			strays[i] = stray
		}
		// A row without its own date carries the one above it only
		// inside the table: next to a row, a balance or the header.
		if !haveDate || !dated && (!near || len(rows) == 0 && pending == nil) || !dated && cls == lineTotal {
			strays[i] = append(strays[i], *txTok)
			continue
		}
		r := layoutRow{line: i, date: lastDate, desc: text, amt: txTok.amt, kind: kind, dir: dir}
		if pending != nil && !dated {
			r.date, r.desc = pending.date, append(pending.desc, text...)
		}
		if balTok != nil {
			r.bal = balTok.amt.signedValue()
		}
		rows = append(rows, r)
		if r.bal != nil {
			anchors = append(anchors, layoutAnchor{after: len(rows), line: i, v: r.bal})
		}
		pending, lastRow = nil, len(rows)-1
		lastY, inTable = l.y, true
		rowsOnPage++
	}
	return rows, anchors, strays
}

// lineText is a line's words that are not its leading dates or its
// column figures: its description.
func lineText(l layoutLine, t *layoutTable) []string {
	var out []string
	lead := len(leadingDates(l))
	if !t.datedAt(l) {
		lead = 0
	}
	in, _ := t.amountsIn(l, false)
	used := map[float64]bool{}
	for _, tok := range in {
		used[tok.x1] = true
	}
	for j, tok := range l.toks {
		if j < lead || tok.kind == tokAmount && used[tok.x1] {
			continue
		}
		if s := strings.TrimSpace(tok.s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// signRows gives each row its signed value: a CR/DR, S/H or sign mark
// first, then the column (out or in), then the section's heading, then
// the running balance's move, and on a card statement (where the issuer
// prints a purchase as a plain figure) a plain figure is money out.
func (t *layoutTable) signRows(rows []layoutRow, anchors []layoutAnchor) {
	before := map[int]*big.Rat{} // the balance printed before row i
	for _, a := range anchors {
		before[a.after] = a.v
	}
	for i := range rows {
		r := &rows[i]
		prevBal := before[i]
		abs := new(big.Rat).Abs(r.amt.value())
		v := new(big.Rat).Set(abs)
		switch {
		case r.kind == colOut:
			v.Neg(v)
		case r.kind == colIn:
		case r.amt.mark != 0:
			v = r.amt.value()
		case r.dir != 0:
			if r.dir < 0 {
				v.Neg(v)
			}
		case prevBal != nil && r.bal != nil && new(big.Rat).Abs(new(big.Rat).Sub(r.bal, prevBal)).Cmp(abs) == 0:
			if r.bal.Cmp(prevBal) < 0 {
				v.Neg(v)
			}
		case t.card:
			v = r.amt.r
			v = new(big.Rat).Neg(v)
		default:
			v = new(big.Rat).Set(r.amt.r)
		}
		r.val = v
	}
}
