package statements

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// rewebon_5.pdf is encrypted with a 40-bit RC4 key and no user password
// (anyone may open it); the PDF library takes 16 bytes of each object's
// key where the standard takes 10, and reads its text as noise.
// Decrypted first, its text layer reads the receipt.
func TestDecryptWeakRC4(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "receipts", "rewebon_5.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	plain := decryptWeakRC4(data)
	if len(plain) != len(data) || bytes.Contains(plain, []byte("/Encrypt")) {
		t.Fatalf("decrypted to %d bytes from %d, /Encrypt left: %v", len(plain), len(data), bytes.Contains(plain, []byte("/Encrypt")))
	}
	r, err := ReadReceipt("rewebon_5.pdf", plain, ReceiptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ReadBy != "text" || r.Total != "39.44" || r.Currency != "EUR" || r.Date != "2023-08-11" || !merchantIs(r.Merchant, []string{"REWE", "REWE Jürgen Maziejewski OHG"}) {
		t.Fatalf("read %+v", r)
	}
	lines := pageLines(t, plain)
	if len(lines) < 60 || lines[0].text() != "R E W E Jürgen Maziejewski OHG" {
		t.Fatalf("%d lines, the first %q", len(lines), lines[0].text())
	}
}

// A file that is not encrypted, or whose user password is not empty, is
// left as it is.
func TestDecryptWeakRC4LeavesOthers(t *testing.T) {
	plain := makePDF(1, 5)
	if got := decryptWeakRC4(plain); !bytes.Equal(got, plain) {
		t.Error("an unencrypted file was changed")
	}
	data, err := os.ReadFile(filepath.Join("testdata", "receipts", "rewebon_5.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	// Another /U: the empty password no longer opens it.
	locked := bytes.Replace(data, []byte("/U <785B"), []byte("/U <785C"), 1)
	if bytes.Equal(locked, data) {
		t.Fatal("no /U to change")
	}
	if got := decryptWeakRC4(locked); !bytes.Equal(got, locked) {
		t.Error("a file with a user password was changed")
	}
}

// FuzzDecryptWeakRC4 takes any file without panicking, and keeps its
// length (so its cross-reference offsets).
func FuzzDecryptWeakRC4(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "receipts", "rewebon_5.pdf"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("1 0 obj << /Length 2 0 R >> stream\n(abc) endobj 2 0 obj 99 endobj /Encrypt 3 0 R /ID [<00>] 3 0 obj << /Filter /Standard /V 1 /R 2 /O (x) /U (y) >> endobj"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		if got := decryptWeakRC4(data); len(got) != len(data) {
			t.Fatalf("%d bytes from %d", len(got), len(data))
		}
	})
}
