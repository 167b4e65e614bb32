package orchestrator

import (
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// FormatMoneyIn writes money as a person of the locale reads it: English
// as FormatMoney (£1,234.50), French with a space between thousands, a
// decimal comma and the sign after (1 234,56 €).
func FormatMoneyIn(locale string, m contracts.Money) string {
	if contracts.Language(locale) != "fr" {
		return FormatMoney(m)
	}
	sign, minor := "", m.Minor
	if minor < 0 {
		sign, minor = "-", -minor
	}
	whole, frac, hasFrac := strings.Cut(contracts.FormatMinor(minor, m.Currency), ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteRune('\u202f') // the narrow no-break space French writes between thousands
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("," + frac)
	}
	unit := m.Currency
	if sym, ok := symbols[m.Currency]; ok {
		unit = sym
	}
	return sign + b.String() + "\u00a0" + unit
}

// FormatDateIn writes a YYYY-MM-DD date as the locale reads it: as is in
// English, "22/11/2026" in French.
func FormatDateIn(locale, date string) string {
	if contracts.Language(locale) != "fr" || len(date) != 10 {
		return date
	}
	return date[8:10] + "/" + date[5:7] + "/" + date[0:4]
}
