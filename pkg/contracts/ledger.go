package contracts

// LedgerRequest asks for one page of the user's ledger, newest first (op
// ledger): expenses typed in chat and transactions read from statements.
// From and To are inclusive dates; both empty mean the current month in
// the user's time zone (their setting, else UTC), one empty means that
// end of the current month. Query matches a case-insensitive part of the
// description or merchant, Category a category exactly. Cursor is the
// NextCursor of the page before. Limit 0 takes 50.
type LedgerRequest struct {
	From     string `json:"from,omitempty" validate:"omitempty,date"`
	To       string `json:"to,omitempty" validate:"omitempty,date"`
	Query    string `json:"q,omitempty" validate:"max=200,text"`
	Category string `json:"category,omitempty" validate:"max=64,text"`
	Limit    int    `json:"limit,omitempty" validate:"gte=0,lte=200"`
	Cursor   string `json:"cursor,omitempty" validate:"max=128,text"`
}

// LedgerReply is one page of the user's ledger; NextCursor, when set,
// asks for the page after it.
type LedgerReply struct {
	Entries    []LedgerEntry `json:"entries,omitempty"`
	NextCursor string        `json:"next_cursor,omitempty"`
	InboxFailure
}

// Kinds of LedgerEntry.
const (
	LedgerKindExpense     = "expense"     // typed by hand in chat
	LedgerKindTransaction = "transaction" // read from a statement
)

// LedgerEntry is one entry of a person's ledger. ID is unique across
// kinds ("expense-12", "transaction-40"). Amount is signed: money out is
// negative. Description, Category and Account are data, made one visible
// line by PlainText, not markdown. Source is the document an imported
// entry was read from, empty for an expense. Links names the entries this
// one is paired with: the bank line and the expense typed by hand it
// settles ("linked"), the two sides of a transfer ("transfer").
type LedgerEntry struct {
	ID          string       `json:"id"`
	Kind        string       `json:"kind"`
	Date        string       `json:"date"`
	Amount      Money        `json:"amount"`
	Description string       `json:"description"`
	Category    string       `json:"category"`
	Account     string       `json:"account"`
	Source      string       `json:"source"`
	Links       []LedgerLink `json:"links"`
}

// LedgerLink names another entry of the ledger and how this one relates
// to it (Kind: LedgerLinkLinked or LedgerLinkTransfer).
type LedgerLink struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

// Kinds of LedgerLink.
const (
	LedgerLinkLinked   = "linked"   // an expense typed by hand and the bank line that settles it
	LedgerLinkTransfer = "transfer" // the two sides of a transfer between the person's accounts
)

// LedgerSummaryRequest adds up the user's ledger from From to To
// (inclusive dates, defaulting as in LedgerRequest) (op ledger_summary).
type LedgerSummaryRequest struct {
	From string `json:"from,omitempty" validate:"omitempty,date"`
	To   string `json:"to,omitempty" validate:"omitempty,date"`
}

// LedgerSummaryReply is the sums of the range asked, with the dates the
// defaults chose. Count is the entries in the range; Spending (money out)
// and Income (money in) are positive minor units, one per currency, sorted
// by currency; ByCategory is each category's spending. Currencies are never
// added together. A transfer between the person's own accounts is neither
// spending nor income: Transfers counts the lines left out for it. An
// imported line that settles an expense typed by hand counts once.
type LedgerSummaryReply struct {
	From       string             `json:"from,omitempty"`
	To         string             `json:"to,omitempty"`
	Count      int                `json:"count,omitempty"`
	Transfers  int                `json:"transfers,omitempty"`
	Spending   []Money            `json:"spending,omitempty"`
	Income     []Money            `json:"income,omitempty"`
	ByCategory []CategorySpending `json:"by_category,omitempty"`
	InboxFailure
}

// CategorySpending is what one category spent, per currency.
type CategorySpending struct {
	Category string  `json:"category"`
	Spending []Money `json:"spending"`
}
