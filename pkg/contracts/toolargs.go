package contracts

// Tool names.
const (
	ToolAddExpense            = "add_expense"
	ToolUpdateExpense         = "update_expense"
	ToolDeleteExpense         = "delete_expense"
	ToolListExpenses          = "list_expenses"
	ToolGetBalance            = "get_balance"
	ToolSearchGmail           = "search_gmail"
	ToolFetchEmailAttachments = "fetch_email_attachments"
	ToolGetRecentImports      = "get_recent_imports"
	ToolGetTransactions       = "get_transactions"
	ToolGetChatHistory        = "get_chat_history"
	ToolSetPreferences        = "set_preferences"
	ToolUpdateTransaction     = "update_transaction"
	ToolGetLastChange         = "get_last_change"
	ToolUndoChange            = "undo_change"
	ToolPreviewImport         = "preview_import"
	// ToolAskClarification is the built-in tool a model calls to ask a
	// question under the native tool-calling protocol. It never runs.
	ToolAskClarification = "ask_clarification"
)

// AddExpenseArgs adds one expense.
type AddExpenseArgs struct {
	Item     string  `json:"item" validate:"required,max=200,text" jsonschema_description:"What was bought or paid for, e.g. 'electricity bill'."`
	Amount   Amount  `json:"amount" validate:"required,amount" jsonschema_description:"Amount in major units, positive, digits and at most one '.', as a number or a string: 12.50 or \"12.50\"; whole for currencies without minor units (JPY)."`
	Currency *string `json:"currency,omitempty" validate:"omitempty,currency" jsonschema_description:"ISO 4217 currency code, e.g. 'GBP', 'EUR', 'JPY'; the user's default when null."`
	Date     *string `json:"date,omitempty" validate:"omitempty,date" jsonschema_description:"Date of the expense, YYYY-MM-DD in the user's time zone; today when null."`
	Category *string `json:"category,omitempty" validate:"omitempty,max=64,text" jsonschema_description:"Category such as 'groceries' or 'utilities'; null when not given."`
	// DocumentID keeps the receipt the expense was read from with it.
	DocumentID *string `json:"document_id,omitempty" validate:"omitempty,purserid" jsonschema_description:"The document_id of the uploaded receipt this expense was read from; null otherwise."`
}

// UpdateExpenseArgs changes fields of one expense; null fields stay as they are.
type UpdateExpenseArgs struct {
	ID       int64   `json:"id" validate:"required,gte=1" jsonschema_description:"The expense number as shown to the user."`
	Item     *string `json:"item,omitempty" validate:"omitempty,min=1,max=200,text" jsonschema_description:"New description, or null to keep it."`
	Amount   *Amount `json:"amount,omitempty" validate:"omitempty,amount" jsonschema_description:"New amount in major units, as a number or a string (12.50 or \"12.50\"), or null to keep it."`
	Currency *string `json:"currency,omitempty" validate:"omitempty,currency" jsonschema_description:"New ISO 4217 currency code, given together with the amount in that currency, or null to keep it."`
	Date     *string `json:"date,omitempty" validate:"omitempty,date" jsonschema_description:"New date YYYY-MM-DD, or null to keep it."`
	Category *string `json:"category,omitempty" validate:"omitempty,max=64,text" jsonschema_description:"New category, or null to keep it."`
}

// DeleteExpenseArgs deletes one expense.
type DeleteExpenseArgs struct {
	ID int64 `json:"id" validate:"required,gte=1" jsonschema_description:"The expense number as shown to the user."`
}

// ListExpensesArgs lists expenses.
type ListExpensesArgs struct {
	Range    *string `json:"range,omitempty" validate:"omitempty,daterange" jsonschema_description:"Date range: today, yesterday, this_week, last_week, this_month, last_month, this_quarter, last_quarter, this_year, last_year, last_N_days, YYYY (a year), YYYY-QN (a quarter, e.g. 2026-Q1), YYYY-MM (a month), since_YYYY-MM-DD, YYYY-MM-DD..YYYY-MM-DD or all_time; this_month when null."`
	Category *string `json:"category,omitempty" validate:"omitempty,max=64,text" jsonschema_description:"Only this category; all when null."`
	ID       *int64  `json:"id,omitempty" validate:"omitempty,gte=1" jsonschema_description:"Only the expense with this number, whatever its date (range and category are then ignored); null for every expense in the range."`
}

// GetBalanceArgs totals expenses in a range.
type GetBalanceArgs struct {
	Range *string `json:"range,omitempty" validate:"omitempty,daterange" jsonschema_description:"Date range in the same grammar as list_expenses; this_month when null."`
	Query *string `json:"query,omitempty" validate:"omitempty,min=1,max=100,text" jsonschema_description:"Only what these words name: part of an entry's description or merchant ('coffee', 'Tesco'), or its category ('groceries'); null for everything."`
}

// SearchGmailArgs searches the user's mail.
type SearchGmailArgs struct {
	Query string `json:"query" validate:"required,max=500,text" jsonschema_description:"Words to look for in sender, subject and attachment names, e.g. 'visa statement'."`
	Days  *int   `json:"days,omitempty" validate:"omitempty,gte=1,lte=3650" jsonschema_description:"How many days back to search; 90 when null."`
	Limit *int   `json:"limit,omitempty" validate:"omitempty,gte=1,lte=50" jsonschema_description:"Most messages to return; 5 when null."`
}

// FetchEmailAttachmentsArgs downloads a message's statements and queues their import.
type FetchEmailAttachmentsArgs struct {
	MessageID string `json:"message_id" validate:"required,purserid" jsonschema_description:"The id of a message returned by search_gmail."`
}

// GetRecentImportsArgs summarises the latest statement imports.
type GetRecentImportsArgs struct {
	Days  *int `json:"days,omitempty" validate:"omitempty,gte=1,lte=3650" jsonschema_description:"How many days back; 30 when null."`
	Limit *int `json:"limit,omitempty" validate:"omitempty,gte=1,lte=50" jsonschema_description:"Most imports to return; 5 when null."`
}

// GetTransactionsArgs lists imported bank transactions.
type GetTransactionsArgs struct {
	FromDate     *string `json:"from_date,omitempty" validate:"omitempty,date" jsonschema_description:"First date YYYY-MM-DD, or null."`
	ToDate       *string `json:"to_date,omitempty" validate:"omitempty,date" jsonschema_description:"Last date YYYY-MM-DD, or null."`
	Vendor       *string `json:"vendor,omitempty" validate:"omitempty,max=100,text" jsonschema_description:"Part of the vendor or description, or null."`
	Category     *string `json:"category,omitempty" validate:"omitempty,max=64,text" jsonschema_description:"Only this category, or null."`
	ReviewStatus *string `json:"review_status,omitempty" validate:"omitempty,oneof=ok needs_review" jsonschema:"enum=ok,enum=needs_review" jsonschema_description:"'needs_review' for transactions to check, 'ok' for the rest; all when null."`
	Limit        *int    `json:"limit,omitempty" validate:"omitempty,gte=1,lte=500" jsonschema_description:"Most transactions to return; 50 when null."`
	ID           *int64  `json:"id,omitempty" validate:"omitempty,gte=1" jsonschema_description:"Only the transaction with this number, whatever its date (the other filters are then ignored); null for every matching transaction."`
}

// AskClarificationArgs is the built-in clarify tool's argument.
type AskClarificationArgs struct {
	Question string `json:"question" validate:"required,max=2000,text" jsonschema_description:"One short question for the user."`
}

// GetChatHistoryArgs looks back through the current conversation.
type GetChatHistoryArgs struct {
	Query  *string `json:"query,omitempty" validate:"omitempty,min=1,max=200,text" jsonschema_description:"Words to look for in earlier messages (either side), or null for the latest."`
	Before *int64  `json:"before,omitempty" validate:"omitempty,gte=1" jsonschema_description:"Only messages before this position (the 'position' of an earlier result), to page further back; null for the newest."`
	Limit  *int    `json:"limit,omitempty" validate:"omitempty,gte=1,lte=50" jsonschema_description:"Most messages to return; 10 when null."`
}

// SetPreferencesArgs changes the user's own defaults; null fields stay.
type SetPreferencesArgs struct {
	Currency  *string `json:"currency,omitempty" validate:"omitempty,currency" jsonschema_description:"The user's default currency, ISO 4217 (e.g. 'EUR'), for amounts and statements that name none; null to keep it."`
	Timezone  *string `json:"timezone,omitempty" validate:"omitempty,tz" jsonschema_description:"The user's IANA time zone (e.g. 'Europe/Paris'), for 'today' and date ranges; null to keep it."`
	DateOrder *string `json:"date_order,omitempty" validate:"omitempty,oneof=dmy mdy ymd" jsonschema:"enum=dmy,enum=mdy,enum=ymd" jsonschema_description:"How the user writes dates: 'dmy' (31/12), 'mdy' (12/31) or 'ymd'; null to keep it."`
	Language  *string `json:"language,omitempty" validate:"omitempty,oneof=en fr" jsonschema:"enum=en,enum=fr" jsonschema_description:"The language the user wants answers in: 'en' (English) or 'fr' (French); null to keep it."`
}

// UpdateTransactionArgs fixes or clears one imported transaction; null
// fields stay as they are.
type UpdateTransactionArgs struct {
	ID          int64   `json:"id" validate:"required,gte=1" jsonschema_description:"The transaction number as shown to the user."`
	Category    *string `json:"category,omitempty" validate:"omitempty,min=1,max=64,text" jsonschema_description:"New category such as 'groceries' or 'rent', or null to keep it."`
	Description *string `json:"description,omitempty" validate:"omitempty,min=1,max=200,text" jsonschema_description:"New description, or null to keep it."`
	Review      *string `json:"review,omitempty" validate:"omitempty,oneof=clear" jsonschema:"enum=clear" jsonschema_description:"'clear' to mark the transaction as reviewed (no longer needing review); null to keep its review status."`
}

// GetLastChangeArgs finds the latest change an undo would revert.
type GetLastChangeArgs struct {
	Scope    *string `json:"scope,omitempty" validate:"omitempty,oneof=any import" jsonschema:"enum=any,enum=import" jsonschema_description:"'import' for the latest statement import only; 'any' (or null) for the latest change of any kind."`
	ChangeID *int64  `json:"change_id,omitempty" validate:"omitempty,gte=1" jsonschema_description:"Only this change (scope is then ignored), if it can still be undone; null for the latest."`
}

// UndoChangeArgs reverts one change found by get_last_change.
type UndoChangeArgs struct {
	ChangeID int64 `json:"change_id" validate:"required,gte=1" jsonschema_description:"The id of the change, as get_last_change returned it."`
}

// PreviewImportArgs reads the statements attached to one message and says
// what importing them would add, changing nothing.
type PreviewImportArgs struct {
	MessageID string `json:"message_id" validate:"required,purserid" jsonschema_description:"The id of a message returned by search_gmail."`
}
