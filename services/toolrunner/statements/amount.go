package statements

import (
	"errors"
	"math/big"
	"strings"
)

var errAmount = errors.New("not an amount")

// parseAmount reads a money amount as written in statements: "1,234.56",
// "1.234,56", "-$76.00", "+120,00", "(12.00)", "12.00-", "-3.77000".
// It returns minor units (2 decimals, rounded half away from zero) and
// whether the text had a decimal part.
func parseAmount(s string) (minor int64, decimals bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, errAmount
	}
	neg := false
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		neg, s = true, s[1:len(s)-1]
	}
	if strings.HasSuffix(s, "-") {
		neg, s = !neg, s[:len(s)-1]
	}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		neg, s = !neg, s[1:]
	} else if strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	for _, sym := range []string{"$", "£", "€", "USD", "EUR", "GBP", "CAD", "NZD"} {
		s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSuffix(s, sym), sym))
	}
	if strings.HasPrefix(s, "-") { // "$-5.00"
		neg, s = !neg, s[1:]
	}
	s = strings.ReplaceAll(s, " ", "")
	s = strings.ReplaceAll(s, "\u00a0", "")
	if s == "" || len(s) > 24 {
		return 0, false, errAmount
	}
	dot, comma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	var intPart, frac string
	switch {
	case dot >= 0 && comma >= 0 && dot > comma: // 1,234.56
		intPart, frac = strings.ReplaceAll(s[:dot], ",", ""), s[dot+1:]
	case dot >= 0 && comma >= 0: // 1.234,56
		intPart, frac = strings.ReplaceAll(s[:comma], ".", ""), s[comma+1:]
	case comma >= 0:
		// "136,13" is a decimal comma; "1,750" and "1,234,567" group thousands.
		if strings.Count(s, ",") > 1 || len(s)-comma-1 == 3 {
			intPart = strings.ReplaceAll(s, ",", "")
		} else {
			intPart, frac = s[:comma], s[comma+1:]
		}
	case dot >= 0:
		if strings.Count(s, ".") > 1 { // 1.234.567
			intPart = strings.ReplaceAll(s, ".", "")
		} else {
			intPart, frac = s[:dot], s[dot+1:]
		}
	default:
		intPart = s
	}
	if intPart == "" {
		intPart = "0"
	}
	if !digits(intPart) || (frac != "" && !digits(frac)) || len(frac) > 8 {
		return 0, false, errAmount
	}
	r, ok := new(big.Rat).SetString(intPart + "." + frac + "0")
	if !ok {
		return 0, false, errAmount
	}
	r.Mul(r, big.NewRat(100, 1))
	// Round half away from zero.
	num, den := new(big.Int).Set(r.Num()), r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if new(big.Int).Mul(m, big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() || q.Int64() > 1e15 {
		return 0, false, errAmount
	}
	minor = q.Int64()
	if neg {
		minor = -minor
	}
	return minor, frac != "", nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// currencyOf guesses a currency from symbols in an amount cell.
func currencyOf(s string) string {
	switch {
	case strings.Contains(s, "£"):
		return "GBP"
	case strings.Contains(s, "€"):
		return "EUR"
	case strings.Contains(s, "$"):
		return "USD"
	}
	return ""
}
