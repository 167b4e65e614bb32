package statements

import (
	"fmt"
	"math/big"
	"regexp"
)

// A statement prints balances: a running balance beside some rows,
// brought and carried forward at page breaks, and an opening and a
// closing one in its summary. Transactions read from a PDF, and above all
// by OCR, are checked against them: a row whose amount does not take the
// balance before it to the balance after it is marked for review, and the
// result says what did not add up. Where one reading alone makes the
// figures add up (a sign taken from the wrong column; an OCR'd amount
// between two balances that both agree with their other neighbours) it
// is taken, and said.

// balanceAnchor is a balance printed after the first `after` transactions.
type balanceAnchor struct {
	after int
	v     *big.Rat
}

// signedValue is the amount with its sign and CR/DR marker applied.
func (a amount) signedValue() *big.Rat {
	v := a.value()
	if a.mark < 0 && v.Sign() > 0 {
		v.Neg(v)
	}
	return v
}

var (
	reOpening = regexp.MustCompile(`(?i)\b(?:opening|previous|starting|beginning)\s*balance\b`)
	reClosing = regexp.MustCompile(`(?i)\b(?:closing|new|ending)\s*balance\b`)
)

// summaryBalances are the opening and closing balances a statement's
// summary names, nil where it names none.
func summaryBalances(lines []pdfLine, ocr bool) (open, closing *big.Rat) {
	for _, l := range lines {
		t := l.text()
		var target **big.Rat
		switch {
		case open == nil && reOpening.MatchString(t):
			target = &open
		case closing == nil && reClosing.MatchString(t):
			target = &closing
		default:
			continue
		}
		for i := len(l.cells) - 1; i >= 0; i-- {
			s := l.cells[i].s
			if ocr {
				s, _ = ocrAmountText(s)
			}
			if a, err := readAmount(s, sepAuto); err == nil && a.decimals > 0 {
				*target = a.signedValue()
				break
			}
		}
	}
	return open, closing
}

// reconciliation is what the balances said of the transactions.
type reconciliation struct {
	review   []string // per transaction: why to check it ("" when it adds up)
	notes    []string // for Result.Uncertain
	warnings []string // what was put right, for Result.Warnings
	checked  bool     // some balances were there to check against
}

// reconcile checks vals (the signed amounts, which it may correct) against
// the running balances and the summary's opening and closing ones.
// repair allows amounts, not only signs, to be corrected.
func reconcile(vals []*big.Rat, anchors []balanceAnchor, open, closing *big.Rat, repair bool) reconciliation {
	rc := reconciliation{review: make([]string, len(vals))}
	sum := func(from, to int) *big.Rat {
		s := new(big.Rat)
		for _, v := range vals[from:to] {
			s.Add(s, v)
		}
		return s
	}
	// seg i runs from anchors[i] to anchors[i+1].
	type seg struct {
		from, to int
		a, b     *big.Rat
	}
	var segs []seg
	for i := 0; i+1 < len(anchors); i++ {
		if anchors[i+1].after >= anchors[i].after {
			segs = append(segs, seg{anchors[i].after, anchors[i+1].after, anchors[i].v, anchors[i+1].v})
		}
	}
	adds := func(s seg, sign int) bool {
		d := sum(s.from, s.to)
		if sign < 0 {
			d.Neg(d)
		}
		return new(big.Rat).Add(s.a, d).Cmp(s.b) == 0
	}
	// A card statement's balance is what is owed: it falls as the
	// account holder pays. The convention is the one more rows agree with.
	sign, plus, minus := 1, 0, 0
	for _, s := range segs {
		if s.to > s.from {
			if adds(s, 1) {
				plus++
			}
			if adds(s, -1) {
				minus++
			}
		}
	}
	if minus > plus {
		sign = -1
	}
	// A balance whose sign was misread (a speck taken for a minus) fails
	// the rows on both sides of it, and the other sign makes them add up.
	for i := range segs {
		if i > 0 && segs[i-1].b != segs[i].a {
			continue
		}
		a := segs[i].a
		fails := !adds(segs[i], sign) && (i == 0 || !adds(segs[i-1], sign))
		if !fails || a.Sign() == 0 {
			continue
		}
		a.Neg(a)
		if !adds(segs[i], sign) || i > 0 && !adds(segs[i-1], sign) {
			a.Neg(a)
		}
	}
	if n := len(segs); n > 0 {
		// And the last balance.
		b := segs[n-1].b
		if !adds(segs[n-1], sign) && b.Sign() != 0 {
			b.Neg(b)
			if !adds(segs[n-1], sign) {
				b.Neg(b)
			}
		}
	}
	ok := make([]bool, len(segs))
	for i, s := range segs {
		ok[i] = adds(s, sign)
	}
	flipped, corrected, unchecked := 0, 0, 0
	for i, s := range segs {
		if ok[i] {
			continue
		}
		if s.to-s.from == 1 {
			v := vals[s.from]
			v.Neg(v)
			if adds(s, sign) {
				ok[i] = true
				flipped++
				continue
			}
			v.Neg(v)
			// Both balances agree with their other neighbours: the
			// amount between them is the one misread.
			before := i == 0 || ok[i-1] && segs[i-1].to == s.from
			after := i+1 < len(segs) && ok[i+1] && segs[i+1].from == s.to
			if repair && before && after {
				want := new(big.Rat).Sub(s.b, s.a)
				if sign < 0 {
					want.Neg(want)
				}
				if want.Sign() != 0 {
					v.Set(want)
					ok[i] = true
					corrected++
					continue
				}
			}
		}
		for j := s.from; j < s.to; j++ {
			if rc.review[j] == "" {
				rc.review[j] = "its amount does not take the balance printed before it to the one printed after it"
				unchecked++
			}
		}
	}
	if len(segs) > 0 {
		rc.checked = true
	}
	if flipped > 0 {
		rc.warnings = append(rc.warnings, countOf(flipped, "amount")+" took the sign that the printed balances gave")
	}
	if corrected > 0 {
		rc.warnings = append(rc.warnings, countOf(corrected, "amount")+" read by OCR was put right from the balances printed before and after it")
	}
	if unchecked > 0 {
		rc.notes = append(rc.notes, fmt.Sprintf("%s do not add up to the balances printed beside them: check them against the statement",
			countOf(unchecked, "transaction")))
	}
	if open != nil && closing != nil && len(vals) > 0 {
		total := sum(0, len(vals))
		up := new(big.Rat).Add(open, total)
		down := new(big.Rat).Sub(open, total)
		if up.Cmp(closing) == 0 || down.Cmp(closing) == 0 {
			rc.checked = true
		} else {
			rc.checked = true
			rc.notes = append(rc.notes, fmt.Sprintf("the transactions add up to %s, which does not take the opening balance %s to the closing balance %s: some may be missing or misread",
				total.FloatString(2), open.FloatString(2), closing.FloatString(2)))
			if unchecked == 0 {
				// The running balances did not show which rows are wrong.
				for j := range rc.review {
					rc.review[j] = "the statement's transactions do not add up to its closing balance"
				}
			}
		}
	}
	return rc
}
