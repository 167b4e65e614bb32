package contracts

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMinor turns a decimal amount as tool arguments carry it ("12.5",
// "200", "0.05") into integer minor units (1250, 20000, 5). It accepts what
// the "decimal" validation accepts and nothing else; amounts never pass
// through a float.
func ParseMinor(amount string) (int64, error) {
	if !decimalPattern.MatchString(amount) {
		return 0, fmt.Errorf("amount must be a decimal such as 12.50")
	}
	whole, frac, _ := strings.Cut(amount, ".")
	for len(frac) < 2 {
		frac += "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount is too large")
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, nil
}

// FormatDecimal is the inverse of ParseMinor: 1250 becomes "12.50".
func FormatDecimal(minor int64) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	return fmt.Sprintf("%s%d.%02d", sign, minor/100, minor%100)
}
