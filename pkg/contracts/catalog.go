package contracts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/invopop/jsonschema"
)

// ToolKind says whether a tool only reads or changes something.
type ToolKind string

// Tool kinds. Every mutation waits for the person's yes by default.
const (
	KindRead     ToolKind = "read"
	KindMutation ToolKind = "mutation"
)

// ToolSpec describes one tool: its name, what the model is told about it,
// its kind, and its argument type.
type ToolSpec struct {
	Name        string
	Description string
	Kind        ToolKind
	newArgs     func() any
}

var catalog = []ToolSpec{
	{ToolAddExpense, "Add one expense the user paid.", KindMutation, func() any { return new(AddExpenseArgs) }},
	{ToolUpdateExpense, "Change an existing expense by its number.", KindMutation, func() any { return new(UpdateExpenseArgs) }},
	{ToolDeleteExpense, "Delete an expense by its number.", KindMutation, func() any { return new(DeleteExpenseArgs) }},
	{ToolListExpenses, "List the user's expenses in a date range, optionally one category.", KindRead, func() any { return new(ListExpensesArgs) }},
	{ToolGetBalance, "Total the user's expenses in a date range.", KindRead, func() any { return new(GetBalanceArgs) }},
	{ToolListLedger, "List the user's ledger in a date range, newest first: expenses typed by hand and imported bank lines together, each with its kind and number; optionally only entries whose description or merchant holds some words.", KindRead, func() any { return new(ListLedgerArgs) }},
	{ToolSearchGmail, "Search the user's mail for messages such as bank statements. Returns ids, senders, subjects, dates and attachment names.", KindRead, func() any { return new(SearchGmailArgs) }},
	{ToolFetchEmailAttachments, "Download the statement attachments of one message and import their transactions.", KindMutation, func() any { return new(FetchEmailAttachmentsArgs) }},
	{ToolGetRecentImports, "Summarise the latest statement imports.", KindRead, func() any { return new(GetRecentImportsArgs) }},
	{ToolGetTransactions, "List imported bank transactions, filtered by dates, vendor, category or review status, with totals.", KindRead, func() any { return new(GetTransactionsArgs) }},
	{ToolSetPreferences, "Change the user's own defaults: currency, time zone, or how they write dates.", KindMutation, func() any { return new(SetPreferencesArgs) }},
	{ToolGetChatHistory, "Look back through this conversation's earlier messages, only when the user refers to something said before that is not in view. Pages back; can search.", KindRead, func() any { return new(GetChatHistoryArgs) }},
	{ToolSummarizeSpending, "Add up the user's spending over a date range by category, by merchant, or month over month (each month's change from the one before), per currency.", KindRead, func() any { return new(SummarizeSpendingArgs) }},
	{ToolBiggestExpenses, "List the user's biggest payments in a date range, per currency.", KindRead, func() any { return new(BiggestExpensesArgs) }},
	{ToolRecurringPayments, "Find payments that recur (subscriptions, memberships, standing orders): the same merchant, a similar amount, monthly or weekly, with when the next is due.", KindRead, func() any { return new(RecurringPaymentsArgs) }},
	{ToolListCategories, "List the user's categories: the defaults everyone has and the ones they added.", KindRead, func() any { return new(ListCategoriesArgs) }},
	{ToolAddCategory, "Add a category of the user's own, e.g. 'pets'.", KindMutation, func() any { return new(AddCategoryArgs) }},
	{ToolListRules, "List the user's rules (a pattern of merchant or description -> a category), in the order they are tried: longest pattern first.", KindRead, func() any { return new(ListRulesArgs) }},
	{ToolSetRule, "Make a rule that files future entries whose merchant or description contains a pattern under a category, or change the category of the rule with that pattern. Rules apply when entries are added or imported.", KindMutation, func() any { return new(SetRuleArgs) }},
	{ToolDeleteRule, "Delete the user's rule with a pattern.", KindMutation, func() any { return new(DeleteRuleArgs) }},
	{ToolRecategorize, "File the user's existing entries whose merchant or description contains a pattern under a category, optionally only in a date range.", KindMutation, func() any { return new(RecategorizeArgs) }},
	{ToolMatchEntries, "Count the user's entries whose merchant or description contains a pattern and show the newest few, with the rule for that pattern if one exists.", KindRead, func() any { return new(MatchEntriesArgs) }},
	{ToolUpdateTransaction, "Fix an imported transaction by its number: its category or description, or clear its review flag.", KindMutation, func() any { return new(UpdateTransactionArgs) }},
	{ToolGetLastChange, "Find the user's latest change that can be undone (an expense added, changed or deleted, a transaction fixed, or a whole statement import).", KindRead, func() any { return new(GetLastChangeArgs) }},
	{ToolUndoChange, "Undo one change found by get_last_change, reverting exactly that change.", KindMutation, func() any { return new(UndoChangeArgs) }},
	{ToolReadUpload, "Read a file the user uploaded: say whether it is a bank statement (and what importing it would add) or a receipt (merchant, date, total, currency), changing nothing.", KindRead, func() any { return new(ReadUploadArgs) }},
	{ToolImportUpload, "Import the transactions of a bank statement the user uploaded, once read_upload has read it.", KindMutation, func() any { return new(ImportUploadArgs) }},
	{ToolSearch, "Find the user's own records by words or meaning: ledger entries, imported documents (receipts, statements) and earlier conversation messages. Use it to find payments to someone, receipts or what was said; results come with sources to cite.", KindRead, func() any { return new(SearchArgs) }},
	{ToolPreviewImport, "Say what importing the statements of one message would add, changing nothing: for each file how many transactions are new and how many are already in the ledger, and which may be expenses typed by hand.", KindRead, func() any { return new(PreviewImportArgs) }},
}

var clarifySpec = ToolSpec{ToolAskClarification, "Ask the user one clarifying question when the request is ambiguous or missing something. Nothing runs.", KindRead, func() any { return new(AskClarificationArgs) }}

// Tools returns the tool catalog, in a stable order. It does not include
// the built-in ask_clarification tool.
func Tools() []ToolSpec { return slices.Clone(catalog) }

// LookupTool finds a tool by name, including ask_clarification.
func LookupTool(name string) (ToolSpec, bool) {
	if name == clarifySpec.Name {
		return clarifySpec, true
	}
	for _, t := range catalog {
		if t.Name == name {
			return t, true
		}
	}
	return ToolSpec{}, false
}

// NewArgs returns a pointer to a zero value of the tool's argument struct.
func (t ToolSpec) NewArgs() any { return t.newArgs() }

// DecodeArgs decodes and validates raw as this tool's arguments (unknown
// fields rejected; null for an optional field means absent) and returns a
// pointer to the argument struct.
func (t ToolSpec) DecodeArgs(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	v := t.newArgs()
	if err := Decode(raw, v); err != nil {
		return nil, err
	}
	return v, nil
}

// CanonicalArgs decodes raw as this tool's arguments and re-encodes them in
// one canonical form (field order fixed, absent optional fields dropped), so
// two spellings of the same arguments compare equal byte for byte.
func (t ToolSpec) CanonicalArgs(raw json.RawMessage) (json.RawMessage, error) {
	v, err := t.DecodeArgs(raw)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s args: %w", t.Name, err)
	}
	return out, nil
}

var (
	schemaMu    sync.Mutex
	schemaCache = map[string]json.RawMessage{}
)

// Schema returns the tool's strict JSON schema for the model: every property
// listed in required, optional ones nullable, additionalProperties false,
// every field described.
func (t ToolSpec) Schema() json.RawMessage {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := schemaCache[t.Name]; ok {
		return s
	}
	s := strictSchema(t.newArgs())
	schemaCache[t.Name] = s
	return s
}

// strictSchema reflects v's type and rewrites the result for strict mode.
func strictSchema(v any) json.RawMessage {
	r := jsonschema.Reflector{AllowAdditionalProperties: false, DoNotReference: true, Anonymous: true}
	s := r.Reflect(v)
	s.Version = ""
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("contracts: schema for %T: %v", v, err)) // static types: cannot fail at run time
	}
	// A generic tree is fine here: it never crosses the bus, it only
	// rewrites the reflected schema.
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		panic(fmt.Sprintf("contracts: schema for %T: %v", v, err))
	}
	props, _ := tree["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := tree["required"].([]any); ok {
		for _, name := range req {
			required[name.(string)] = true
		}
	}
	names := make([]string, 0, len(props))
	for name, p := range props {
		names = append(names, name)
		if required[name] {
			continue
		}
		prop := p.(map[string]any)
		if typ, ok := prop["type"].(string); ok {
			prop["type"] = []any{typ, "null"}
		}
		if anyOf, ok := prop["anyOf"].([]any); ok {
			prop["anyOf"] = append(anyOf, map[string]any{"type": "null"})
		}
		if enum, ok := prop["enum"].([]any); ok {
			prop["enum"] = append(enum, nil)
		}
	}
	slices.Sort(names)
	tree["required"] = names
	tree["additionalProperties"] = false
	delete(tree, "$id")
	out, err := json.Marshal(tree)
	if err != nil {
		panic(fmt.Sprintf("contracts: schema for %T: %v", v, err))
	}
	return out
}
