package statements

import (
	"errors"
	"math/big"
	"strings"
	"unicode"
)

var errAmount = errors.New("not an amount")

// amount is a money cell as written.
type amount struct {
	r        *big.Rat // signed as written (a minus, parentheses); CR/DR not applied
	mark     int      // +1 for a CR marker, -1 for DR, 0 for none
	signed   bool     // an explicit sign or parentheses
	ccy      string   // a currency code or unambiguous symbol in the cell
	dollar   bool     // a bare "$"
	decimals int      // digits after the decimal separator
	comma    bool     // the decimal separator was a comma
}

// decimal separators a column may have settled
const (
	sepAuto  = 0
	sepDot   = '.'
	sepComma = ','
)

// readAmount reads a money amount as written in statements: "1,234.56",
// "1.234,56", "-$76.00", "+120,00", "(12.00)", "12.00-", "-3.77000",
// "1,968.51CR", "12.00 DR", "DKK -12,50", "1'234.50". sep is the column's
// decimal separator when the file settles it (sepAuto otherwise).
func readAmount(s string, sep rune) (amount, error) {
	var a amount
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return a, errAmount
	}
	neg := false
	for range 4 { // markers and symbols in any order
		before := s
		if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
			neg, a.signed, s = !neg, true, strings.TrimSpace(s[1:len(s)-1])
		}
		up := strings.ToUpper(s)
		switch {
		case strings.HasSuffix(up, "CR"):
			a.mark, s = 1, strings.TrimSpace(s[:len(s)-2])
		case strings.HasSuffix(up, "DR"):
			a.mark, s = -1, strings.TrimSpace(s[:len(s)-2])
		case strings.HasSuffix(up, "DB"):
			a.mark, s = -1, strings.TrimSpace(s[:len(s)-2])
		case strings.HasPrefix(up, "CR "):
			a.mark, s = 1, strings.TrimSpace(s[3:])
		case strings.HasPrefix(up, "DR "):
			a.mark, s = -1, strings.TrimSpace(s[3:])
		}
		if strings.HasSuffix(s, "-") {
			neg, a.signed, s = !neg, true, strings.TrimSpace(s[:len(s)-1])
		}
		if strings.HasSuffix(s, "+") {
			a.signed, s = true, strings.TrimSpace(s[:len(s)-1])
		}
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "−") {
			_, n := firstRune(s)
			neg, a.signed, s = !neg, true, strings.TrimSpace(s[n:])
		} else if strings.HasPrefix(s, "+") {
			a.signed, s = true, strings.TrimSpace(s[1:])
		}
		s = a.stripCurrency(s)
		if s == before {
			break
		}
	}
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\u00a0' || r == '\u202f' || r == '\'' || r == '’' {
			return -1
		}
		return r
	}, s)
	if s == "" || len(s) > 48 {
		return a, errAmount
	}
	dot, comma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	var intPart, frac string
	switch {
	case dot >= 0 && comma >= 0 && dot > comma: // 1,234.56
		if strings.Count(s, ".") > 1 {
			return a, errAmount
		}
		intPart, frac = strings.ReplaceAll(s[:dot], ",", ""), s[dot+1:]
	case dot >= 0 && comma >= 0: // 1.234,56
		if strings.Count(s, ",") > 1 {
			return a, errAmount
		}
		intPart, frac, a.comma = strings.ReplaceAll(s[:comma], ".", ""), s[comma+1:], true
	case comma >= 0:
		// "136,13" is a decimal comma; "1,750" and "1,234,567" group
		// thousands unless the column says commas are decimal.
		switch {
		case strings.Count(s, ",") > 1:
			if !groupedBy(s, ',') {
				return a, errAmount
			}
			intPart = strings.ReplaceAll(s, ",", "")
		case len(s)-comma-1 == 3 && sep != sepComma && comma > 0:
			intPart = strings.ReplaceAll(s, ",", "")
		default:
			intPart, frac, a.comma = s[:comma], s[comma+1:], true
		}
	case dot >= 0:
		switch {
		case strings.Count(s, ".") > 1:
			if !groupedBy(s, '.') {
				return a, errAmount
			}
			intPart = strings.ReplaceAll(s, ".", "")
		case len(s)-dot-1 == 3 && sep == sepComma && dot > 0:
			intPart = strings.ReplaceAll(s, ".", "")
		default:
			intPart, frac = s[:dot], s[dot+1:]
		}
	default:
		intPart = s
	}
	if intPart == "" {
		intPart = "0"
	}
	if !digits(intPart) || (frac != "" && !digits(frac)) || len(frac) > 30 || len(intPart) > 16 {
		return a, errAmount
	}
	a.decimals = len(frac)
	r, ok := new(big.Rat).SetString(intPart + "." + frac + "0")
	if !ok {
		return a, errAmount
	}
	if neg {
		r.Neg(r)
	}
	a.r = r
	return a, nil
}

func firstRune(s string) (rune, int) {
	for i, r := range s {
		if i > 0 {
			return 0, i
		}
		_ = r
	}
	return 0, len(s)
}

// groupedBy: "1,234,567" groups of three after the first.
func groupedBy(s string, g byte) bool {
	parts := strings.Split(s, string(g))
	if len(parts[0]) == 0 || len(parts[0]) > 3 {
		return false
	}
	for _, p := range parts[1:] {
		if len(p) != 3 {
			return false
		}
	}
	return true
}

// stripCurrency takes a leading or trailing currency code or symbol off s.
func (a *amount) stripCurrency(s string) string {
	for _, sy := range symbols {
		if strings.HasPrefix(s, sy.sym) {
			a.ccy = sy.ccy
			return strings.TrimSpace(s[len(sy.sym):])
		}
		if strings.HasSuffix(s, sy.sym) {
			a.ccy = sy.ccy
			return strings.TrimSpace(s[:len(s)-len(sy.sym)])
		}
	}
	if strings.HasPrefix(s, "$") {
		a.dollar = true
		return strings.TrimSpace(s[1:])
	}
	if strings.HasSuffix(s, "$") {
		a.dollar = true
		return strings.TrimSpace(s[:len(s)-1])
	}
	if len(s) > 3 {
		if c := s[:3]; isCurrency(c) && !unicode.IsLetter(rune(s[3])) {
			a.ccy = c
			return strings.TrimSpace(s[3:])
		}
		if c := s[len(s)-3:]; isCurrency(c) && !unicode.IsLetter(rune(s[len(s)-4])) {
			a.ccy = c
			return strings.TrimSpace(s[:len(s)-3])
		}
	}
	return s
}

// value is the amount's sign applied with its CR/DR marker.
func (a amount) value() *big.Rat {
	r := new(big.Rat).Set(a.r)
	switch a.mark {
	case 1:
		r.Abs(r)
	case -1:
		r.Abs(r)
		r.Neg(r)
	}
	return r
}

// parseAmount reads an amount to hundredths, for comparing columns: the
// minor units of the transactions come from toMinor with their currency.
func parseAmount(s string) (minor int64, decimals bool, err error) {
	a, err := readAmount(s, sepAuto)
	if err != nil {
		return 0, false, err
	}
	m, _, ok := toMinor(a.value(), "")
	if !ok {
		return 0, false, errAmount
	}
	return m, a.decimals > 0, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
