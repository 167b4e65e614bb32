package contracts

// ToolListLedger lists a person's ledger: what they typed and what their
// statements brought, together.
const ToolListLedger = "list_ledger"

// ListLedgerArgs lists ledger entries of a date range, newest first.
type ListLedgerArgs struct {
	Range *string `json:"range,omitempty" validate:"omitempty,daterange" jsonschema_description:"Date range in the same grammar as list_expenses; this_month when null."`
	Query *string `json:"query,omitempty" validate:"omitempty,min=1,max=100,text" jsonschema_description:"Only entries whose description or merchant holds these words ('Tesco'); null for every entry."`
	Limit *int    `json:"limit,omitempty" validate:"omitempty,gte=1,lte=100" jsonschema_description:"Most entries to return; 30 when null."`
}

// LedgerList is the output of list_ledger: the newest entries of the
// range (typed and imported, each with its kind and number), and whether
// more entries than these are in the range.
type LedgerList struct {
	Range   string      `json:"range"`
	From    string      `json:"from"`
	To      string      `json:"to"`
	Query   string      `json:"query,omitempty"`
	Entries []EntryView `json:"entries"`
	More    bool        `json:"more,omitempty"`
}
