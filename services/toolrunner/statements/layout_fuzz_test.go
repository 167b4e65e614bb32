package statements

import "testing"

// FuzzLayout: whatever the positioned text, the layout reading gives a
// clear error or well-formed transactions, never a panic.
func FuzzLayout(f *testing.F) {
	for _, tt := range layoutCases {
		data, _ := tt.gen()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		lines, _, err := pdfLines(data)
		if err != nil {
			return
		}
		lr, err := layoutFromLines(lines, Options{DefaultCurrency: "EUR"})
		if err == nil {
			finish(&lr.res)
		}
		checkResult(t, lr.res, err)
	})
}
