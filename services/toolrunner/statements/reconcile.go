package statements

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
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
	reOpening  = regexp.MustCompile(`(?i)\b(?:opening|previous|starting|beginning)\s*balance\b`)
	reClosing  = regexp.MustCompile(`(?i)\b(?:closing|new|ending)\s*balance\b`)
	reTotalIn  = regexp.MustCompile(`(?i)^\s*(?:total\s*)?(?:credits|payments\s*in|paid\s*in|money\s*in|deposits)\b`)
	reTotalOut = regexp.MustCompile(`(?i)^\s*(?:total\s*)?(?:debits|payments\s*out|paid\s*out|money\s*out|withdrawals)\b`)
)

// summary is what a statement's summary box prints, nil where it does not.
type summary struct {
	open, closing *big.Rat // balances
	in, out       *big.Rat // totals of money in and out
}

// readSummary finds the summary's figures: the first line that names
// each and ends in an amount.
func readSummary(lines []pdfLine, ocr bool) summary {
	var sm summary
	for _, l := range lines {
		t := l.text()
		var target **big.Rat
		switch {
		case sm.open == nil && reOpening.MatchString(t):
			target = &sm.open
		case sm.closing == nil && reClosing.MatchString(t):
			target = &sm.closing
		case sm.in == nil && reTotalIn.MatchString(t):
			target = &sm.in
		case sm.out == nil && reTotalOut.MatchString(t):
			target = &sm.out
		default:
			continue
		}
		s := l.cells[len(l.cells)-1].s
		if ocr {
			s, _ = ocrAmountText(s)
		}
		if a, err := readAmount(s, sepAuto); err == nil && a.decimals > 0 {
			*target = a.signedValue()
		}
	}
	return sm
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
func reconcile(vals []*big.Rat, anchors []balanceAnchor, sm summary, repair bool) reconciliation {
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
				if want.Sign() != 0 && oneDigitOff(v, want) {
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
	var bad []string
	if sm.open != nil && sm.closing != nil && len(vals) > 0 {
		total := sum(0, len(vals))
		up := new(big.Rat).Add(sm.open, total)
		down := new(big.Rat).Sub(sm.open, total)
		rc.checked = true
		if up.Cmp(sm.closing) != 0 && down.Cmp(sm.closing) != 0 {
			bad = append(bad, fmt.Sprintf("the transactions add up to %s, which does not take the opening balance %s to the closing balance %s",
				total.FloatString(2), sm.open.FloatString(2), sm.closing.FloatString(2)))
		}
	}
	in, out := new(big.Rat), new(big.Rat)
	for _, v := range vals {
		if v.Sign() > 0 {
			in.Add(in, v)
		} else {
			out.Sub(out, v)
		}
	}
	for _, c := range []struct {
		printed, got *big.Rat
		what         string
	}{{sm.in, in, "money in"}, {sm.out, out, "money out"}} {
		if c.printed == nil || len(vals) == 0 {
			continue
		}
		rc.checked = true
		if p := new(big.Rat).Abs(c.printed); p.Cmp(c.got) != 0 {
			bad = append(bad, fmt.Sprintf("the statement's total %s is %s, and its transactions' %s", c.what, p.FloatString(2), c.got.FloatString(2)))
		}
	}
	if len(bad) > 0 {
		rc.notes = append(rc.notes, strings.Join(bad, "; ")+": some may be missing or misread")
		if unchecked == 0 {
			// The running balances did not show which rows are wrong.
			for j := range rc.review {
				rc.review[j] = "the statement's transactions do not add up to the totals it prints"
			}
		}
	}
	return rc
}

// oneDigitOff: a and b are written with the same digits but one, as a
// misread digit leaves them ("100.60" for "100.00"); a row lost beside
// them would leave the balances to tell another difference altogether.
func oneDigitOff(a, b *big.Rat) bool {
	if a.Sign() != b.Sign() {
		return false
	}
	x := strings.TrimPrefix(a.FloatString(2), "-")
	y := strings.TrimPrefix(b.FloatString(2), "-")
	if len(x) != len(y) {
		return false
	}
	diff := 0
	for i := range x {
		if x[i] != y[i] {
			diff++
		}
	}
	return diff == 1
}
