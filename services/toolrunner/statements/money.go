package statements

import (
	"math/big"

	"github.com/purser-ai/purser/pkg/contracts"
)

// minorUnits is how many decimals a currency's minor unit has, from
// contracts' one ISO 4217 table (2 for a code it does not know).
func minorUnits(ccy string) int {
	if d, ok := contracts.MinorUnits(ccy); ok {
		return d
	}
	return 2
}

// isCurrency reports whether a code is an active ISO 4217 currency, so
// that "DKK" in a row is read as a currency and "ATM" or "POS" is not.
func isCurrency(code string) bool { return contracts.ValidCurrency(code) }

// symbols that name one currency. "$", "kr" and "¥" are not among them:
// many currencies write them.
var symbols = []struct{ sym, ccy string }{
	{"£", "GBP"}, {"€", "EUR"}, {"₹", "INR"}, {"₩", "KRW"}, {"₺", "TRY"}, {"₦", "NGN"}, {"₴", "UAH"}, {"₱", "PHP"},
	{"₪", "ILS"}, {"zł", "PLN"}, {"Kč", "CZK"}, {"Ft", "HUF"}, {"US$", "USD"}, {"C$", "CAD"}, {"CA$", "CAD"},
	{"A$", "AUD"}, {"AU$", "AUD"}, {"NZ$", "NZD"}, {"HK$", "HKD"}, {"S$", "SGD"}, {"R$", "BRL"}, {"CHF", "CHF"},
}

// dollarCurrencies write their amounts with a bare "$".
var dollarCurrencies = map[string]bool{"USD": true, "CAD": true, "AUD": true, "NZD": true, "HKD": true, "SGD": true,
	"MXN": true, "ARS": true, "CLP": true, "COP": true, "TWD": true, "JMD": true, "BSD": true, "BBD": true, "FJD": true, "TTD": true}

var (
	bigTen = big.NewInt(10)
	bigTwo = big.NewInt(2)
)

// toMinor converts an exact amount to the currency's minor units, rounding
// half to even; rounded reports whether anything was lost.
func toMinor(r *big.Rat, ccy string) (minor int64, rounded, ok bool) {
	scale := new(big.Int).Exp(bigTen, big.NewInt(int64(minorUnits(ccy))), nil)
	num := new(big.Int).Mul(r.Num(), scale)
	den := r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int)) // truncates toward zero
	if m.Sign() != 0 {
		rounded = true
		twice := new(big.Int).Mul(new(big.Int).Abs(m), bigTwo)
		c := twice.Cmp(den)
		if c > 0 || (c == 0 && q.Bit(0) == 1) {
			if num.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	if !q.IsInt64() || q.Int64() > maxMinor || q.Int64() < -maxMinor {
		return 0, false, false
	}
	return q.Int64(), rounded, true
}

// maxMinor bounds an amount: a quadrillion minor units is more than any
// statement line.
const maxMinor = 1e15
