package statements

import (
	"strings"
)

// QIF (Quicken Interchange Format): records of one-letter fields ended by
// "^", under "!Type:" headers. It names no currency; the date order comes
// from the whole file like a CSV's.

func looksLikeQIF(text string) bool {
	head := strings.TrimSpace(text[:min(len(text), 2048)])
	return strings.HasPrefix(head, "!Type:") || strings.HasPrefix(head, "!Account") || strings.HasPrefix(head, "!Option:") ||
		strings.HasPrefix(head, "!Clear:")
}

func parseQIF(text string, opts Options) (Result, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	b := newBuilder("qif", "QIF", opts)
	var typ string
	inAccount := false
	rec := map[byte]string{}
	skipped := 0
	end := func() error {
		defer clear(rec)
		if inAccount {
			inAccount = false
			return nil
		}
		if len(rec) == 0 {
			return nil
		}
		ds, ts := rec['D'], rec['T']
		if ts == "" {
			ts = rec['U']
		}
		if ds == "" || ts == "" {
			skipped++
			return nil
		}
		// Quicken writes 1/ 5'23 for 1/5/2023.
		ds = strings.ReplaceAll(strings.ReplaceAll(ds, "'", "/"), " ", "")
		dc, ok := splitDate(ds)
		a, err := readAmount(ts, sepAuto)
		if !ok || err != nil {
			skipped++
			return nil
		}
		desc := rec['P']
		if desc == "" {
			desc = rec['M']
		}
		if desc == "" {
			desc = rec['L']
		}
		return b.add(rawTxn{date: dc, amt: a.value(), desc: desc})
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "!") {
			if err := end(); err != nil {
				return Result{}, err
			}
			h := strings.ToLower(line)
			switch {
			case strings.HasPrefix(h, "!type:"):
				typ = strings.TrimSpace(line[6:])
			case h == "!account":
				inAccount = true
			}
			continue
		}
		if line[0] == '^' {
			if err := end(); err != nil {
				return Result{}, err
			}
			continue
		}
		k := line[0]
		if _, seen := rec[k]; !seen || k == 'M' {
			if seen {
				rec[k] += " " + line[1:]
			} else {
				rec[k] = strings.TrimSpace(line[1:])
			}
		}
	}
	if err := end(); err != nil {
		return Result{}, err
	}
	if typ != "" {
		b.res.Layout = "QIF " + typ
	}
	if skipped > 0 {
		b.warn("skipped %s without a date and an amount", countOf(skipped, "record"))
	}
	if len(b.txns) == 0 {
		return Result{}, unreadable("a QIF file without transactions")
	}
	return b.finish()
}
