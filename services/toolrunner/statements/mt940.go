package statements

import (
	"regexp"
	"strings"
)

// SWIFT MT940 customer statements (and MT942's entries): tagged lines,
// possibly inside {1:}{2:}{4: ... -} blocks and after a bank's preamble.

var (
	reMTTag     = regexp.MustCompile(`(?m)^:(\d{2}[A-Z]?):`)
	reMT61      = regexp.MustCompile(`^(\d{6})(\d{4})?(RC|RD|C|D|EC|ED)([A-Z])?(\d[\d,.]*)([A-Z][A-Z0-9]{3})?([^\n]*)`)
	reMTBalance = regexp.MustCompile(`^([CD])(\d{6})([A-Z]{3})(\d[\d,.]*)`)
	reMTSub     = regexp.MustCompile(`\?(\d{2})`)
)

func looksLikeMT940(text string) bool {
	head := text[:min(len(text), 8192)]
	return reMTTag.MatchString(head) && strings.Contains(head, ":61:") || (strings.Contains(head, ":20:") && strings.Contains(head, ":60F:"))
}

type mtField struct{ tag, value string }

// mtFields splits the text into tagged fields; continuation lines belong
// to the field above.
func mtFields(text string) []mtField {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var out []mtField
	for _, line := range strings.Split(text, "\n") {
		if m := reMTTag.FindStringSubmatch(line); m != nil {
			out = append(out, mtField{m[1], strings.TrimRight(line[len(m[0]):], " ")})
			continue
		}
		t := strings.TrimSpace(line)
		if len(out) == 0 || t == "" || t == "-" || t == "-}" || strings.HasPrefix(t, "{") {
			continue
		}
		out[len(out)-1].value += "\n" + strings.TrimRight(line, " ")
	}
	return out
}

func parseMT940(text string, opts Options) (Result, error) {
	b := newBuilder("mt940", "SWIFT MT940", opts)
	var acct, ccy string
	statements := 0
	var last *rawTxn
	flush := func() error {
		if last == nil {
			return nil
		}
		t := *last
		last = nil
		if t.desc == "" {
			t.desc = "MT940 entry " + t.fitid
		}
		return b.add(t)
	}
	for _, f := range mtFields(text) {
		switch f.tag {
		case "20":
			if err := flush(); err != nil {
				return Result{}, err
			}
			statements++
			ccy = ""
		case "25":
			acct = strings.TrimSpace(strings.SplitN(f.value, "\n", 2)[0])
			if fs := strings.Fields(acct); len(fs) == 2 && isCurrency(fs[1]) {
				acct, ccy = fs[0], fs[1] // "NL10BUNQ2290325473 EUR"
			}
		case "60F", "60M", "62F", "62M", "64", "65":
			if m := reMTBalance.FindStringSubmatch(strings.TrimSpace(f.value)); m != nil && isCurrency(m[3]) && (ccy == "" || f.tag[:2] == "60") {
				ccy = m[3]
			}
			if err := flush(); err != nil {
				return Result{}, err
			}
		case "61":
			if err := flush(); err != nil {
				return Result{}, err
			}
			m := reMT61.FindStringSubmatch(f.value)
			if m == nil {
				b.warn("skipped an unreadable :61: line")
				continue
			}
			dc, ok := splitDate("20" + m[1])
			if !ok {
				y, _ := fullYear(m[1][:2])
				dc, ok = splitDate(itoa(y) + m[1][2:])
			}
			if !ok {
				b.warn("skipped a :61: line with an impossible date")
				continue
			}
			if y, _ := fullYear(m[1][:2]); y != dc.y {
				dc.y = y
			}
			a, err := readAmount(strings.TrimRight(m[5], ",.")+decimalTail(m[5]), sepComma)
			if err != nil {
				b.warn("skipped a :61: line with an unreadable amount")
				continue
			}
			amt := a.value()
			if m[3] == "D" || m[3] == "RC" || m[3] == "ED" {
				amt.Neg(amt)
			}
			ref := strings.TrimSpace(m[7])
			if i := strings.Index(ref, "\n"); i >= 0 {
				ref = ref[:i]
			}
			t := rawTxn{date: dc, amt: amt, ccy: ccy, account: acct}
			if ref != "" && !strings.EqualFold(ref, "NONREF") {
				t.fitid = acct + ":" + ref
			}
			if i := strings.Index(f.value, "\n"); i >= 0 {
				t.desc = strings.TrimSpace(f.value[i+1:]) // supplementary details
			}
			last = &t
		case "86":
			if last != nil {
				if d := mt86(f.value); d != "" {
					last.desc = d
				}
				if err := flush(); err != nil {
					return Result{}, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return Result{}, err
	}
	if statements > 1 {
		b.res.Layout += ", " + countOf(statements, "statement")
	}
	if len(b.txns) == 0 {
		return Result{}, unreadable("an MT940 file without transactions")
	}
	return b.finish()
}

// decimalTail: MT940 writes "75," for 75.00; readAmount wants the comma
// kept as the decimal separator.
func decimalTail(s string) string {
	if strings.HasSuffix(s, ",") {
		return ",0"
	}
	return ""
}

// mt86 reads the information to the account owner: the /NAME/ and /REMI/
// of structured (bunq, SEPA) fields, the ?20–?29 and ?32–?33 subfields of
// German banks, else the text.
func mt86(v string) string {
	flat := strings.ReplaceAll(v, "\n", "")
	if strings.Contains(flat, "/NAME/") || strings.Contains(flat, "/REMI/") {
		var parts []string
		for _, key := range []string{"NAME", "REMI"} {
			if i := strings.Index(flat, "/"+key+"/"); i >= 0 {
				rest := flat[i+len(key)+2:]
				if j := regexp.MustCompile(`/[A-Z]{2,4}/`).FindStringIndex(rest); j != nil {
					rest = rest[:j[0]]
				}
				if rest = strings.TrimSpace(rest); rest != "" && !containsFold(parts, rest) {
					parts = append(parts, rest)
				}
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " ")
		}
	}
	if locs := reMTSub.FindAllStringSubmatchIndex(flat, -1); len(locs) > 1 {
		var parts []string
		for i, l := range locs {
			code := flat[l[2]:l[3]]
			end := len(flat)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			val := strings.TrimSpace(flat[l[1]:end])
			if (code >= "20" && code <= "29") || code == "32" || code == "33" || (code >= "60" && code <= "63") {
				if val != "" {
					parts = append(parts, val)
				}
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " ")
		}
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(v, "\n", " ")), " ")
}
