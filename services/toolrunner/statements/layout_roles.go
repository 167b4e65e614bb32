package statements

import (
	"math/big"
	"sort"
)

// assignRoles decides what each amount column holds. The running balance
// is the column whose figures chain: between two of its figures with one
// amount in another column, they differ by that amount. Of the rest, two
// columns that a row fills one at a time are money out and money in
// (named by their headings, else by which way the balance moved, else
// out first, as most banks print them); one column is a signed amount.
func (t *layoutTable) assignRoles() bool {
	n := len(t.amtCols)
	named := make([]int, n)
	for i, c := range t.amtCols {
		named[i] = c.kind
	}
	type lineAmts struct {
		in map[int]layoutTok
	}
	var ls []lineAmts
	for _, l := range t.lines {
		if lineClass(l.text) == lineTotal {
			continue
		}
		in, _ := t.amountsIn(l, true)
		if len(in) > 0 {
			ls = append(ls, lineAmts{in})
		}
	}
	// chain walks column c as a balance and calls f for each step of one
	// amount between two of its figures: the amount's column, its value
	// and the balance's change.
	chain := func(c int, f func(col int, a, delta *big.Rat)) {
		var prev *big.Rat
		var between []struct {
			col int
			a   *big.Rat
		}
		for _, la := range ls {
			for col, tok := range la.in {
				if col != c {
					between = append(between, struct {
						col int
						a   *big.Rat
					}{col, new(big.Rat).Abs(tok.amt.value())})
				}
			}
			tok, ok := la.in[c]
			if !ok {
				continue
			}
			v := tok.amt.signedValue()
			if prev != nil && len(between) == 1 {
				f(between[0].col, between[0].a, new(big.Rat).Sub(v, prev))
			}
			prev, between = v, between[:0]
		}
	}
	bal, bestMatch := -1, 0
	for c := n - 1; c >= 0; c-- {
		match, pairs := 0, 0
		chain(c, func(_ int, a, delta *big.Rat) {
			pairs++
			if new(big.Rat).Abs(delta).Cmp(a) == 0 {
				match++
			}
		})
		if match > bestMatch && 2*match >= pairs {
			bal, bestMatch = c, match
		}
	}
	if bal < 0 {
		for c := range n {
			if named[c] == colBalance {
				bal = c
			}
		}
	}
	var rest []int
	for c := range n {
		t.amtCols[c].kind = 0
		if c != bal {
			rest = append(rest, c)
		}
	}
	if bal >= 0 {
		t.amtCols[bal].kind = colBalance
	}
	// The two best-filled of the rest.
	sort.SliceStable(rest, func(a, b int) bool { return t.amtCols[rest[a]].n > t.amtCols[rest[b]].n })
	if len(rest) == 0 {
		return false
	}
	if len(rest) == 1 {
		k := named[rest[0]]
		if k != colOut && k != colIn {
			k = colAmount
		}
		t.amtCols[rest[0]].kind = k
		return true
	}
	a, b := rest[0], rest[1]
	if a > b {
		a, b = b, a
	}
	both, either := 0, 0
	for _, la := range ls {
		_, hasA := la.in[a]
		_, hasB := la.in[b]
		if hasA && hasB {
			both++
		}
		if hasA || hasB {
			either++
		}
	}
	if both*10 > either {
		// Not sides of one another: an amount and a balance that does not
		// chain, or an amount and something else.
		t.amtCols[a].kind = colAmount
		if bal < 0 && named[b] != colOut && named[b] != colIn {
			t.amtCols[b].kind = colBalance
		}
		return true
	}
	outCol := a
	switch {
	case named[a] == colIn || named[b] == colOut:
		outCol = b
	case named[a] == colOut || named[b] == colIn:
	case bal >= 0:
		votes := map[int]int{}
		chain(bal, func(col int, amt, delta *big.Rat) {
			if new(big.Rat).Abs(delta).Cmp(amt) == 0 {
				votes[col] += delta.Sign()
			}
		})
		if votes[b] < votes[a] {
			outCol = b
		}
	}
	t.amtCols[a].kind, t.amtCols[b].kind = colIn, colIn
	t.amtCols[outCol].kind = colOut
	return true
}
