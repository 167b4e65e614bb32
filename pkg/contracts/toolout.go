package contracts

import "time"

// Tool outputs: the Data of a ToolResult, one type per tool. The model
// reads them as data, never as instructions.

// ExpenseChanged is the output of add_expense, update_expense and
// delete_expense: the expense as it now is (or was, when deleted).
type ExpenseChanged struct {
	Expense ExpenseView `json:"expense"`
}

// ExpenseList is the output of list_expenses. A lookup by ID lists that
// expense alone, or none and, in Nearby, up to 3 of the person's expenses
// whose numbers are closest to ID (read from at most the first 5,000 of
// their expenses by date, so not guaranteed for a very long history).
type ExpenseList struct {
	Range    string        `json:"range"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	Category string        `json:"category,omitempty"`
	ID       int64         `json:"id,omitempty"`
	Expenses []ExpenseView `json:"expenses"`
	Totals   []Money       `json:"totals"`
	Nearby   []ExpenseView `json:"nearby,omitempty"`
}

// MailSummary is one message found by search_gmail.
type MailSummary struct {
	ID          string    `json:"id"`
	From        string    `json:"from"`
	Subject     string    `json:"subject"`
	Date        time.Time `json:"date"`
	Attachments []string  `json:"attachments"`
	Score       float64   `json:"score"`
	// NewSender is true when the user has never imported a statement from
	// the sender's e-mail domain: a spoofed bank mail reads like a real one.
	NewSender bool `json:"new_sender,omitempty"`
	// Previews say, for each statement attached, what importing it would
	// store: count, dates, currencies, net amount and what is uncertain.
	Previews []string `json:"previews,omitempty"`
}

// MailSearch is the output of search_gmail.
type MailSearch struct {
	Messages []MailSummary `json:"messages"`
}

// QueuedDocument is one attachment fetch_email_attachments stored.
type QueuedDocument struct {
	Filename string `json:"filename"`
	// Status is queued (import started) or duplicate (the same file was
	// imported before; nothing new is added).
	Status string `json:"status"`
}

// AttachmentsFetched is the output of fetch_email_attachments.
type AttachmentsFetched struct {
	MessageID string           `json:"message_id"`
	Subject   string           `json:"subject"`
	Documents []QueuedDocument `json:"documents"`
}

// ImportSummary is one statement import.
type ImportSummary struct {
	Filename  string    `json:"filename"`
	Status    string    `json:"status"` // queued | imported | failed
	Imported  int       `json:"imported"`
	Detail    string    `json:"detail,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// RecentImports is the output of get_recent_imports.
type RecentImports struct {
	Imports []ImportSummary `json:"imports"`
}

// TransactionView is one imported bank transaction.
type TransactionView struct {
	ID           int64  `json:"id,omitempty"`
	Date         string `json:"date"`
	Description  string `json:"description"`
	Vendor       string `json:"vendor,omitempty"`
	Amount       Money  `json:"amount"`
	Category     string `json:"category,omitempty"`
	ReviewStatus string `json:"review_status"`
}

// TransactionList is the output of get_transactions. Totals add up every
// matching transaction, also those beyond the limit.
//
// A lookup by ID lists that transaction alone, or none and, in Nearby, up
// to 3 of the person's transactions whose numbers are closest to ID.
type TransactionList struct {
	Transactions []TransactionView `json:"transactions"`
	Totals       []Money           `json:"totals"`
	Count        int               `json:"count"`
	ID           int64             `json:"id,omitempty"`
	Nearby       []TransactionView `json:"nearby,omitempty"`
}

// TransactionChanged is the output of update_transaction: the transaction
// as it now is.
type TransactionChanged struct {
	Transaction TransactionView `json:"transaction"`
}

// ChangeView is one change an undo reverts. Kind is expense_add,
// expense_update, expense_delete, transaction_update or import. Before and
// After are the entry before and after the change (Before absent for an
// add, After for a deletion); an import has neither but the file's name
// and how many transactions it added.
type ChangeView struct {
	ID           int64      `json:"id"`
	Kind         string     `json:"kind"`
	CreatedAt    time.Time  `json:"created_at"`
	Before       *EntryView `json:"before,omitempty"`
	After        *EntryView `json:"after,omitempty"`
	Filename     string     `json:"filename,omitempty"`
	Transactions int        `json:"transactions,omitempty"`
}

// LastChange is the output of get_last_change: the latest change that can
// be undone, of Scope (any | import), or the change ChangeID names; Change
// is absent when there is none (or that one can no longer be undone).
type LastChange struct {
	Scope    string      `json:"scope"`
	ChangeID int64       `json:"change_id,omitempty"`
	Change   *ChangeView `json:"change,omitempty"`
}

// ChangeUndone is the output of undo_change: the change it reverted.
type ChangeUndone struct {
	Change ChangeView `json:"change"`
}

// ChatHistory is the output of get_chat_history: earlier messages of the
// conversation, oldest first; More says older ones remain (page back with
// before = the first message's position).
type ChatHistory struct {
	Messages []ChatMessage `json:"messages"`
	More     bool          `json:"more"`
}

// ChatMessage is one earlier message: who said it, what, and when, with
// its position in the conversation.
type ChatMessage struct {
	Position int64     `json:"position"`
	Role     string    `json:"role"` // user or assistant
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
}

// Preferences is the output of set_preferences: the user's defaults as
// they now stand (empty when not set).
type Preferences struct {
	Currency  string `json:"currency,omitempty"`
	Timezone  string `json:"timezone,omitempty"`
	DateOrder string `json:"date_order,omitempty"`
	Language  string `json:"language,omitempty"`
}

// ImportPreview is the output of preview_import: the message's sender and
// subject, and what importing each statement attached would add.
type ImportPreview struct {
	MessageID string `json:"message_id"`
	Subject   string `json:"subject"`
	From      string `json:"from"`
	// NewSender is true when the user has never imported a statement from
	// the sender's e-mail domain.
	NewSender bool          `json:"new_sender,omitempty"`
	Files     []FilePreview `json:"files"`
}

// FilePreview is what importing one statement would add. Summary is the
// file's preview (count, dates, currencies, net amount, what is
// uncertain), or why it cannot be read (Readable false). New lines would
// be added; Already are in the ledger already (from this file or the same
// lines of another format). Linked name lines that would be linked to an
// expense typed by hand; Doubtful lines whose amount and date match one
// but whose words do not: they would be kept apart.
type FilePreview struct {
	Filename string   `json:"filename"`
	Summary  string   `json:"summary"`
	Readable bool     `json:"readable"`
	New      int      `json:"new"`
	Already  int      `json:"already"`
	Linked   []string `json:"linked,omitempty"`
	Doubtful []string `json:"doubtful,omitempty"`
}
