package statements

import (
	"math/big"
	"slices"
	"strings"
	"testing"
)

func TestFuzzyHeading(t *testing.T) {
	tests := []struct {
		give string
		want int
	}{
		{"aidout", colOut},  // "Paid out" without its P
		{"paidont", colOut}, // a letter misread
		{"balanee", colBalance},
		{"detaiis", colDesc},
		{"transactiondale", colDate},
		{"in", colOther}, // too short to guess at
		{"sortcode", colOther},
		{"accountnumber", colOther},
	}
	for _, tt := range tests {
		if got := fuzzyHeading(tt.give); got != tt.want {
			t.Errorf("fuzzyHeading(%q) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

// A heading OCR misread by a letter ("Paid ovt", "Balanee") still names
// its column; a text layer's headings are not guessed at.
func TestHeaderColumnsFuzzy(t *testing.T) {
	l := pdfLine{cells: []pdfCell{{0, 50, "Date"}, {100, 300, "Payment type and details"}, {500, 560, "£ Paid ovt"}, {600, 660, "£ Paid in"}, {700, 780, "£ Balanee"}}}
	cols, ok := headerColumns(l, true)
	if !ok {
		t.Fatal("no header read by OCR's rules")
	}
	kinds := []int{}
	for _, c := range cols {
		kinds = append(kinds, c.kind)
	}
	if want := []int{colDate, colDesc, colOut, colIn, colBalance}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if cols, _ := headerColumns(l, false); cols[2].kind != colOther {
		t.Fatalf("a text layer's %q read as kind %d", cols[2].name, cols[2].kind)
	}
}

func TestOCRAmountText(t *testing.T) {
	tests := []struct{ give, want string }{
		{"1O3.5O", "103.50"},
		{"l,303.70", "1,303.70"},
		{"2.215.09", "2,215.09"},
		{"“9.51", "9.51"},
		{"3.22°", "3.22"},
		{"1,968.5lCR", "1,968.51CR"},
		{"S0.00", "50.00"},
		{"26.35", "26.35"},
		{"3:22", "3.22"},
		{"951", "9.51"},        // the point lost
		{"12", "12"},           // too short to say
		{"GPPAW", "GPPAW"},     // a word, not an amount
		{"BBXAW 1", "BBXAW 1"}, // nor this
	}
	for _, tt := range tests {
		if got, _ := ocrAmountText(tt.give); got != tt.want {
			t.Errorf("ocrAmountText(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestOCRDateText(t *testing.T) {
	tests := []struct {
		give, want string
		changed    bool
	}{
		{"01) an 24", "01 Jan 24", true},
		{"06J an 24", "06 Jan 24", true},
		{"04]an 24", "04 Jan 24", true},
		{"O8 Jul 25", "08 Jul 25", true},
		{"12) anuary 2024", "12 January 2024", true},
		{"14 Dec 23", "14 Dec 23", false},
		{"BALANCE", "BALANCE", false},
	}
	for _, tt := range tests {
		got, changed := ocrDateText(tt.give)
		if got != tt.want || changed != tt.changed {
			t.Errorf("ocrDateText(%q) = %q, %v; want %q, %v", tt.give, got, changed, tt.want, tt.changed)
		}
	}
	if d := fullDates("9July to8August 2025", true); len(d) != 1 || d[0].y != 2025 || d[0].a != 8 || d[0].b != 8 {
		t.Errorf("the statement's date read as %+v", d)
	}
}

func rats(vs ...string) []*big.Rat {
	var out []*big.Rat
	for _, v := range vs {
		r, _ := new(big.Rat).SetString(v)
		out = append(out, r)
	}
	return out
}

func anchorsAt(pairs ...any) []balanceAnchor {
	var out []balanceAnchor
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, balanceAnchor{after: pairs[i].(int), v: rats(pairs[i+1].(string))[0]})
	}
	return out
}

func floats(vs []*big.Rat) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.FloatString(2))
	}
	return strings.Join(s, " ")
}

func TestReconcile(t *testing.T) {
	tests := []struct {
		name     string
		vals     []string
		anchors  []balanceAnchor
		repair   bool
		want     string // the amounts after
		review   int    // rows marked
		warnings int
	}{
		{"adds up", []string{"-10.00", "5.00", "-2.50"}, anchorsAt(0, "100.00", 2, "95.00", 3, "92.50"), true, "-10.00 5.00 -2.50", 0, 0},
		{"a sign from the wrong column", []string{"-10.00", "-5.00"}, anchorsAt(0, "100.00", 1, "90.00", 2, "95.00"), false, "-10.00 5.00", 0, 1},
		{"one misread amount between two good balances", []string{"-10.00", "-100.60", "-2.00"}, anchorsAt(0, "100.00", 1, "90.00", 2, "-10.00", 3, "-12.00"), true, "-10.00 -100.00 -2.00", 0, 1},
		{"not from a text layer", []string{"-10.00", "-100.60", "-2.00"}, anchorsAt(0, "100.00", 1, "90.00", 2, "-10.00", 3, "-12.00"), false, "-10.00 -100.60 -2.00", 1, 0},
		{"a row lost, not an amount misread", []string{"-10.00", "3.59", "-2.00"}, anchorsAt(0, "100.00", 1, "90.00", 2, "90.37", 3, "88.37"), true, "-10.00 3.59 -2.00", 1, 0},
		{"two rows, either misread", []string{"-100.60", "-13.66"}, anchorsAt(0, "200.00", 2, "86.34"), true, "-100.60 -13.66", 2, 0},
		{"a balance's sign misread", []string{"-1.37", "1.00"}, anchorsAt(0, "-1000.00", 2, "999.63"), true, "-1.37 1.00", 0, 0},
		{"a card's balance owed", []string{"-20.00", "50.00"}, anchorsAt(0, "100.00", 1, "120.00", 2, "70.00"), true, "-20.00 50.00", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals := rats(tt.vals...)
			rc := reconcile(vals, tt.anchors, summary{}, tt.repair)
			review := 0
			for _, r := range rc.review {
				if r != "" {
					review++
				}
			}
			if got := floats(vals); got != tt.want || review != tt.review || len(rc.warnings) != tt.warnings || !rc.checked {
				t.Fatalf("amounts %s, %d for review, warnings %q, notes %q; want %s, %d, %d warnings", got, review, rc.warnings, rc.notes, tt.want, tt.review, tt.warnings)
			}
			if (review > 0) != (len(rc.notes) > 0) {
				t.Fatalf("notes %q with %d rows for review", rc.notes, review)
			}
		})
	}
}

func TestReconcileSummary(t *testing.T) {
	card := summary{open: rats("1968.51")[0], closing: rats("1679.59")[0]}
	totals := summary{in: rats("1971.19")[0], out: rats("1682.27")[0]}
	for _, sm := range []summary{card, totals} {
		// A card: what is owed falls by what the holder paid net.
		rc := reconcile(rats("-1682.27", "1971.19"), nil, sm, true)
		if !rc.checked || len(rc.notes) != 0 {
			t.Fatalf("%+v", rc)
		}
		rc = reconcile(rats("-1682.27", "1948.19"), nil, sm, true)
		if len(rc.notes) != 1 || rc.review[0] == "" || rc.review[1] == "" {
			t.Fatalf("a total 23.00 short: %+v", rc)
		}
	}
	if rc := reconcile(rats("-1.00"), nil, summary{}, true); rc.checked {
		t.Fatalf("checked without balances: %+v", rc)
	}
}
