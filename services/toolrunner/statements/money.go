package statements

import (
	"math/big"
	"strings"
)

// minorDigits are ISO 4217's minor units where they are not 2.
var minorDigits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0, "RWF": 0,
	"UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	"CLF": 4, "UYW": 4,
}

// minorUnits is how many decimals a currency's minor unit has (2 for a
// currency ISO 4217 gives none, and for an unknown one).
func minorUnits(ccy string) int {
	if d, ok := minorDigits[ccy]; ok {
		return d
	}
	return 2
}

// isoCodes are the active ISO 4217 alphabetic codes, so that "DKK" in a
// row is read as a currency and "ATM" or "POS" is not.
var isoCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL
		BSD BTN BWP BYN BZD CAD CDF CHF CLF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL
		GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT
		LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB
		PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS
		TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UYI UYW UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWG XTS XXX`) {
		m[c] = true
	}
	return m
}()

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

// rounding counts amounts written more precisely than their currency's
// minor unit, which toMinor rounds half to even.
type rounding struct {
	n       int
	example string
}

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
