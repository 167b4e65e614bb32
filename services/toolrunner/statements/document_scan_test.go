package statements

import "testing"

// A statement photographed or scanned and uploaded is read as a
// statement, exactly as the mail flow's Parse reads it, not as a receipt.
func TestUploadedScanOfAStatementIsAStatement(t *testing.T) {
	t.Parallel()
	needOCR(t)
	pdf, count, sum := genPDF(1, 30)
	for _, c := range []struct {
		name string
		data []byte
	}{{"photo.jpeg", photoOf(t, pdf, 200, "jpeg", 7)}, {"scan.pdf", scanOf(t, pdf, 300, 11)}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d, err := ReadDocument(c.name, c.data, Options{DefaultCurrency: "GBP"}, ReceiptOptions{Currency: "GBP"})
			if err != nil {
				t.Fatal(err)
			}
			if d.Kind != KindStatement || d.Statement == nil {
				t.Fatalf("read as %q (receipt %+v), want a statement", d.Kind, d.Receipt)
			}
			var got int64
			for _, tx := range d.Statement.Transactions {
				got += tx.AmountMinor
			}
			if len(d.Statement.Transactions) != count || got != sum {
				t.Fatalf("%d transactions summing %d, want %d summing %d", len(d.Statement.Transactions), got, count, sum)
			}
		})
	}
}
