package orchestrator

import (
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

func TestFormatMoney(t *testing.T) {
	for give, want := range map[contracts.Money]string{
		{Minor: 0, Currency: "GBP"}: "£0.00", {Minor: 5, Currency: "USD"}: "$0.05", {Minor: 123456789, Currency: "EUR"}: "€1,234,567.89",
		{Minor: -1250, Currency: "GBP"}: "-£12.50", {Minor: 1000, Currency: "CHF"}: "10.00 CHF",
		{Minor: 1200, Currency: "JPY"}: "¥1,200", {Minor: 1250, Currency: "KWD"}: "1.250 KWD", {Minor: 1234567, Currency: "KRW"}: "₩1,234,567",
	} {
		if got := FormatMoney(give); got != want {
			t.Errorf("FormatMoney(%+v) = %q, want %q", give, got, want)
		}
	}
}
