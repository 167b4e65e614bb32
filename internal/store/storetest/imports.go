package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/internal/store"
)

// importLine is one line of a statement as the importer gives it.
func importLine(doc, account, key, date string, minor int64, currency, desc string) store.Transaction {
	return store.Transaction{TenantID: "t1", UserID: "u1", DocumentID: doc, Date: date, AmountMinor: minor, Currency: currency,
		Description: desc, Category: "other", DedupeKey: key, Account: account, ReviewStatus: store.ReviewOK, CreatedAt: t0}
}

// One month read from a bank-id statement of the current account, then
// from a CSV of the same month whose descriptions differ, then a savings
// statement: the CSV adds nothing, the same statement again adds
// nothing, the coffee typed by hand is linked to its bank line and
// counted once, the lunch whose words differ is only asked about, the
// transfer to savings is neither spending nor income, and currencies stay
// apart.
func testImportsAddOnlyWhatIsNew(t *testing.T, st *store.Store) {
	coffee := must(st.AddExpense(ctx, ledgerExpense("t1", "u1", "coffee at Costa", 450, "GBP", "2026-10-09", "food")))(t)
	must(st.AddExpense(ctx, ledgerExpense("t1", "u1", "lunch", 1200, "GBP", "2026-10-12", "food")))(t)
	must(st.AddExpense(ctx, ledgerExpense("t1", "u1", "books", 2000, "GBP", "2026-10-02", "other")))(t)

	type row struct {
		date  string
		minor int64
		ccy   string
		bank  string // the MT940's words
		csv   string // the CSV export's words
	}
	month := []row{
		{"2026-10-01", -1299, "GBP", "TESCO STORES 3312", "Tesco"},
		{"2026-10-05", -300, "GBP", "COFFEE SHOP", "Coffee Shop Ltd"},
		{"2026-10-05", -300, "GBP", "COFFEE SHOP", "Coffee Shop Ltd"}, // a genuine repeat
		{"2026-10-10", -450, "GBP", "CARD PAYMENT TO COSTA COFFEE", "Costa"},
		{"2026-10-12", -1200, "GBP", "PRET A MANGER", "Pret"},
		{"2026-10-15", 250000, "GBP", "SALARY ACME", "Acme salary"},
		{"2026-10-20", -50000, "GBP", "TFR TO SAVINGS", "Transfer to savings"},
		{"2026-10-22", -1000, "EUR", "SNCF PARIS", "Sncf"},
	}
	var mt940, csv []store.Transaction
	for i, r := range month {
		mt940 = append(mt940, importLine("doc-mt940", "GB11CURR", fmt.Sprintf("fitid:GB11CURR:%d", i), r.date, r.minor, r.ccy, r.bank))
		key := fmt.Sprintf("h:%s|%d|%s", r.date, r.minor, r.csv)
		if i == 2 {
			key += "#2"
		}
		csv = append(csv, importLine("doc-csv", "", key, r.date, r.minor, r.ccy, r.csv))
	}
	// What the first import would do, said before it is done.
	plan := must(st.PlanImport(ctx, mt940))(t)
	if plan.New != 8 || plan.Already != 0 || len(plan.Linked) != 1 || len(plan.Doubtful) != 1 {
		t.Fatalf("plan of the first statement = %+v, want 8 new, 1 linked, 1 doubtful", plan)
	}
	got := must(st.ImportTransactions(ctx, mt940))(t)
	if got.New != 8 || got.Already != 0 {
		t.Fatalf("first statement: %+v, want 8 new", got)
	}
	if len(got.Linked) != 1 || got.Linked[0].Line != 3 || got.Linked[0].Expense.ID != coffee.ID {
		t.Errorf("linked = %+v, want line 3 to the coffee typed by hand (expense %d)", got.Linked, coffee.ID)
	}
	if len(got.Doubtful) != 1 || got.Doubtful[0].Line != 4 || got.Doubtful[0].Expense.Item != "lunch" {
		t.Errorf("doubtful = %+v, want line 4 against the lunch", got.Doubtful)
	}

	for _, again := range []struct {
		name  string
		lines []store.Transaction
	}{{"the same month as a CSV", csv}, {"the same statement again", mt940}, {"the CSV again", csv}} {
		if plan := must(st.PlanImport(ctx, again.lines))(t); plan.New != 0 || plan.Already != len(month) {
			t.Errorf("plan of %s = %+v, want nothing new", again.name, plan)
		}
		if got := must(st.ImportTransactions(ctx, again.lines))(t); got.New != 0 || got.Already != len(month) || got.Linked != nil {
			t.Errorf("%s: %+v, want nothing new and %d already there", again.name, got, len(month))
		}
	}

	// An overlapping CSV: the last two days again and one new line.
	overlap := append([]store.Transaction{}, csv[6:]...)
	overlap = append(overlap, importLine("doc-csv2", "", "h:new", "2026-10-25", -799, "GBP", "Netflix"))
	if got := must(st.ImportTransactions(ctx, overlap))(t); got.New != 1 || got.Already != 2 {
		t.Errorf("overlapping CSV: %+v, want 1 new and 2 already there", got)
	}

	// The savings account's side of the transfer, three days later.
	savings := []store.Transaction{importLine("doc-savings", "GB22SAVE", "fitid:GB22SAVE:1", "2026-10-23", 50000, "GBP", "FROM CURRENT")}
	if got := must(st.ImportTransactions(ctx, savings))(t); got.New != 1 || got.Transfers != 1 {
		t.Errorf("savings statement: %+v, want 1 new paired as a transfer", got)
	}

	sum := must(st.LedgerSummary(ctx, "t1", "u1", "2026-10-01", "2026-10-31"))(t)
	gbp := func(minor int64) store.LedgerAmount { return store.LedgerAmount{Currency: "GBP", Minor: minor} }
	// Entries: 8 bank lines of the month, Netflix and the savings line,
	// less both sides of the transfer, plus the lunch and the books typed
	// by hand; the coffee typed by hand is its bank line.
	want := store.LedgerSummary{From: "2026-10-01", To: "2026-10-31", Count: 10, Transfers: 2,
		Spending: []store.LedgerAmount{{Currency: "EUR", Minor: 1000}, gbp(1299 + 600 + 450 + 1200 + 799 + 1200 + 2000)},
		Income:   []store.LedgerAmount{gbp(250000)},
		ByCategory: []store.CategorySpending{
			{Category: "food", Spending: []store.LedgerAmount{gbp(1200)}},
			{Category: "other", Spending: []store.LedgerAmount{{Currency: "EUR", Minor: 1000}, gbp(1299 + 600 + 450 + 1200 + 799 + 2000)}},
		}}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	// The ledger still lists the coffee typed by hand, linked to its line,
	// and both sides of the transfer, each naming the other.
	page := must(st.ListLedger(ctx, store.LedgerFilter{TenantID: "t1", UserID: "u1"}))(t)
	var linkedExpense, linkedLine, transfers int
	for _, e := range page.Entries {
		switch {
		case e.Kind == store.LedgerExpense && e.ID == coffee.ID:
			linkedExpense = int(e.LinkID)
		case e.Kind == store.LedgerTransaction && e.LinkID == coffee.ID:
			linkedLine++
			if e.Account != "GB11CURR" || e.AmountMinor != -450 {
				t.Errorf("linked line = %+v", e)
			}
		}
		if e.TransferID != 0 {
			transfers++
		}
	}
	if linkedExpense == 0 || linkedLine != 1 || transfers != 2 {
		t.Errorf("listed: coffee linked to %d, %d lines linked to it, %d transfer sides; want a link both ways and 2 sides", linkedExpense, linkedLine, transfers)
	}
	if len(page.Entries) != 3+8+1+1 {
		t.Errorf("listed %d entries, want 13", len(page.Entries))
	}

	// Deleting the coffee typed by hand leaves its bank line standing, no
	// longer linked to anything, and the sums as they were.
	if err := st.DeleteExpense(ctx, "t1", "u1", coffee.ID); err != nil {
		t.Fatal(err)
	}
	if after := must(st.LedgerSummary(ctx, "t1", "u1", "2026-10-01", "2026-10-31"))(t); !cmp.Equal(want, after) {
		t.Errorf("summary after deleting the linked expense = %+v, want %+v", after, want)
	}
	for _, e := range must(st.ListLedger(ctx, store.LedgerFilter{TenantID: "t1", UserID: "u1", Query: "costa"}))(t).Entries {
		if e.LinkID != 0 {
			t.Errorf("%+v is still linked to the deleted expense", e)
		}
	}
}

// Two identical lines of one file are two transactions, and a second file
// holding one of them (another format, no bank ids) adds nothing, while
// one holding three adds one.
func testImportsKeepGenuineRepeats(t *testing.T, st *store.Store) {
	pair := []store.Transaction{
		importLine("d1", "", "h:a", "2026-10-05", -300, "GBP", "COFFEE"),
		importLine("d1", "", "h:a#2", "2026-10-05", -300, "GBP", "COFFEE"),
	}
	if got := must(st.ImportTransactions(ctx, pair))(t); got.New != 2 {
		t.Fatalf("pair: %+v, want 2 new", got)
	}
	one := []store.Transaction{importLine("d2", "GB11CURR", "fitid:x", "2026-10-05", -300, "GBP", "CARD COFFEE")}
	if got := must(st.ImportTransactions(ctx, one))(t); got.New != 0 || got.Already != 1 {
		t.Errorf("one of the pair from another format: %+v, want nothing new", got)
	}
	three := []store.Transaction{
		importLine("d3", "", "h:b", "2026-10-05", -300, "GBP", "Coffee"),
		importLine("d3", "", "h:b#2", "2026-10-05", -300, "GBP", "Coffee"),
		importLine("d3", "", "h:b#3", "2026-10-05", -300, "GBP", "Coffee"),
	}
	if got := must(st.ImportTransactions(ctx, three))(t); got.New != 1 || got.Already != 2 {
		t.Errorf("three where two are held: %+v, want 1 new", got)
	}
	sum := must(st.LedgerSummary(ctx, "t1", "u1", "2026-10-01", "2026-10-31"))(t)
	if sum.Count != 3 || sum.Spending[0].Minor != 900 {
		t.Errorf("summary = %+v, want 3 coffees, 9.00 GBP", sum)
	}
}

// Statements of one month in four formats imported at the same moment add
// the month once: imports of one user wait for each other.
func testImportsAtOnceAddTheMonthOnce(t *testing.T, st *store.Store) {
	const lines, formats = 120, 4
	statements := make([][]store.Transaction, formats)
	for f := range formats {
		for i := range lines {
			date := fmt.Sprintf("2026-10-%02d", 1+i%28)
			statements[f] = append(statements[f], importLine(fmt.Sprintf("doc-%d", f), "", fmt.Sprintf("h:%d:%d", f, i), date, int64(-100*(i+1)), "GBP", "words"))
		}
	}
	type result struct {
		added int
		err   error
	}
	results := make(chan result, formats)
	for _, lines := range statements {
		go func() {
			out, err := st.ImportTransactions(ctx, lines)
			results <- result{out.New, err}
		}()
	}
	total := 0
	for range formats {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		total += r.added
	}
	txs := must(st.ListTransactions(ctx, store.TransactionFilter{TenantID: "t1", UserID: "u1"}))(t)
	if total != lines || len(txs) != lines {
		t.Fatalf("%d imports at once added %d (%d stored), want the month's %d once", formats, total, len(txs), lines)
	}
}
