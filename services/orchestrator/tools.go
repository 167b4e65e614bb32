package orchestrator

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// This file is what the orchestrator knows of each tool: one row per tool
// of the catalog (pkg/contracts). Adding a tool is its contract, its
// toolrunner handler and one row here; TestEveryCatalogToolHasARow fails
// until the row exists. The sentences a row points to live in describe.go
// (proposals and results), the legacy answer fields in answer.go and what
// memory keeps in memory.go; the bus messages of a tool call are built in
// toolmessages.go.

// ToolSpec is a catalog entry as the model is shown it: name, description,
// kind and argument schema.
type ToolSpec = contracts.ToolSpec

// toolRow is what one tool means to the orchestrator. Every field but kind
// may be left out: the zero value says the tool has nothing of that.
type toolRow struct {
	// kind is the tool's kind as the catalog states it: a mutation waits
	// for the person's yes unless Config.Confirm says otherwise.
	kind contracts.ToolKind
	// verb ends "I couldn't …" and "OK, I won't …" ("Je n'ai pas pu …",
	// "D'accord, je ne vais pas …"); "do that" if empty.
	verb phrase
	// fill sets the server's defaults on decoded arguments (a pointer to
	// the tool's argument struct), so that what the person approves is
	// exactly what runs.
	fill func(args any, s State, env Env) error
	// propose is the proposal's sentence for canonical arguments, built
	// by the server, never from model text, in the language of s.Locale;
	// "Run <tool>?" if nil.
	propose func(args json.RawMessage, s State, env Env) string
	// check looks up what a change touches before it is proposed; nil
	// proposes at once.
	check *checkRow
	// describe reads a successful result aloud in l; "Done." if nil.
	describe func(l lang, data json.RawMessage) string
	// answer sets the Answer's legacy fields from a successful result.
	answer func(a *contracts.Answer, data json.RawMessage)
	// remember is what working memory keeps of a successful result, in
	// order; a value that is empty is not kept.
	remember func(data json.RawMessage) []memoryValue
	// followUp is the next change to offer once this one has run from
	// an approved proposal, read from its result: proposed in turn (and
	// looked up first, like any change), instead of asking the model
	// again. ok false offers nothing.
	followUp func(data json.RawMessage) (next Call, ok bool)
}

// checkRow is how a change is looked up before it is proposed. read is
// the read call for the change's canonical args: it runs at once, a tool
// step like any other. seen reads its result: the proposal's sentence, or,
// when what the change names does not exist, missing, the answer given
// instead of a proposal; both in the language of s.Locale.
type checkRow struct {
	read func(args json.RawMessage) Call
	seen func(args, data json.RawMessage, s State, env Env) (summary, missing string)
}

// toolRows holds one row per catalog tool. It is read, never written.
var toolRows = map[string]toolRow{
	contracts.ToolAddExpense: {kind: contracts.KindMutation, verb: phrase{"add that expense", "ajouter cette dépense"}, fill: fillAddExpense,
		propose: proposeAddExpense, describe: describeExpenseChange(phrase{"Added", "ajoutée"}), answer: answerAdded, remember: rememberExpense},
	contracts.ToolUpdateExpense: {kind: contracts.KindMutation, verb: phrase{"change that expense", "modifier cette dépense"}, check: &checkRow{read: readExpense, seen: seenUpdate},
		propose: proposeUpdateExpense, describe: describeExpenseChange(phrase{"Updated", "modifiée"}), answer: answerUpdated, remember: rememberExpense},
	contracts.ToolDeleteExpense: {kind: contracts.KindMutation, verb: phrase{"delete that expense", "supprimer cette dépense"}, check: &checkRow{read: readExpense, seen: seenDelete},
		propose: proposeDeleteExpense, describe: describeExpenseChange(phrase{"Deleted", "supprimée"}), answer: answerDeleted, remember: rememberExpense},
	contracts.ToolListExpenses: {kind: contracts.KindRead,
		describe: describeExpenses, answer: answerListed, remember: rememberExpenseList},
	contracts.ToolGetBalance: {kind: contracts.KindRead,
		describe: describeBalance, answer: answerBalance, remember: rememberBalance},
	contracts.ToolListLedger: {kind: contracts.KindRead, describe: describeLedgerList},
	contracts.ToolSearchGmail: {kind: contracts.KindRead, verb: phrase{"search your mail", "chercher dans vos e-mails"},
		describe: describeMail, remember: rememberMail},
	contracts.ToolFetchEmailAttachments: {kind: contracts.KindMutation, verb: phrase{"import that statement", "importer ce relevé"}, check: &checkRow{read: readImport, seen: seenFetch},
		propose: proposeFetch, describe: describeFetch, remember: rememberImport},
	contracts.ToolGetRecentImports: {kind: contracts.KindRead,
		describe: describeImports, remember: rememberImports},
	contracts.ToolGetTransactions: {kind: contracts.KindRead,
		describe: describeTransactions, remember: rememberTransactions},
	contracts.ToolSetPreferences: {kind: contracts.KindMutation,
		propose: proposePreferences, describe: describePreferencesSaved},
	contracts.ToolGetChatHistory: {kind: contracts.KindRead},
	contracts.ToolSearch:         {kind: contracts.KindRead, describe: describeSearch},
	contracts.ToolSummarizeSpending: {kind: contracts.KindRead,
		describe: describeSpendingSummary, remember: rememberSpendingSummary},
	contracts.ToolBiggestExpenses: {kind: contracts.KindRead,
		describe: describeBiggestExpenses, remember: rememberBiggestExpenses},
	contracts.ToolRecurringPayments: {kind: contracts.KindRead,
		describe: describeRecurringPayments, remember: rememberRecurringPayments},
	contracts.ToolListCategories: {kind: contracts.KindRead, describe: describeCategories},
	contracts.ToolAddCategory: {kind: contracts.KindMutation, verb: phrase{"add that category", "ajouter cette catégorie"},
		propose: proposeAddCategory, describe: describeCategoryAdded},
	contracts.ToolListRules: {kind: contracts.KindRead, describe: describeRules},
	contracts.ToolSetRule: {kind: contracts.KindMutation, verb: phrase{"save that rule", "enregistrer cette règle"}, check: &checkRow{read: readMatches, seen: seenSetRule},
		propose: proposeSetRule, describe: describeRuleSet},
	contracts.ToolDeleteRule: {kind: contracts.KindMutation, verb: phrase{"delete that rule", "supprimer cette règle"}, check: &checkRow{read: readMatches, seen: seenDeleteRule},
		propose: proposeDeleteRule, describe: describeRuleDeleted},
	contracts.ToolRecategorize: {kind: contracts.KindMutation, verb: phrase{"file those entries", "classer ces opérations"}, check: &checkRow{read: readMatches, seen: seenRecategorize},
		propose: proposeRecategorize, describe: describeRecategorized, followUp: offerRule},
	contracts.ToolMatchEntries: {kind: contracts.KindRead, describe: describeMatches},
	contracts.ToolUpdateTransaction: {kind: contracts.KindMutation, verb: phrase{"change that transaction", "modifier cette transaction"}, check: &checkRow{read: readTransaction, seen: seenUpdateTransaction},
		propose: proposeUpdateTransaction, describe: describeTransactionChanged},
	contracts.ToolGetLastChange: {kind: contracts.KindRead, describe: describeLastChange},
	contracts.ToolUndoChange: {kind: contracts.KindMutation, verb: phrase{"undo that", "annuler cette modification"}, check: &checkRow{read: readChange, seen: seenUndo},
		propose: proposeUndo, describe: describeUndone},
	contracts.ToolPreviewImport: {kind: contracts.KindRead, verb: phrase{"read that statement", "lire ce relevé"},
		describe: describePreviewImport},
	contracts.ToolReadUpload: {kind: contracts.KindRead, verb: phrase{"read that file", "lire ce fichier"},
		describe: describeUploadRead, remember: rememberUpload},
	contracts.ToolImportUpload: {kind: contracts.KindMutation, verb: phrase{"import that statement", "importer ce relevé"},
		propose: proposeImportUpload, describe: describeImportUpload, remember: rememberImport},
}

// tool is a catalog tool with its row.
type tool struct {
	spec ToolSpec
	toolRow
}

// lookupTool finds a tool the model may call: in the catalog and in the
// table. The built-in ask_clarification is not one (see isClarify).
func lookupTool(name string) (tool, bool) {
	if isClarify(name) {
		return tool{}, false
	}
	spec, ok := contracts.LookupTool(name)
	if !ok {
		return tool{}, false
	}
	row, ok := toolRows[name]
	return tool{spec: spec, toolRow: row}, ok
}

// rowOf is name's row, or the zero row (every default) for a name that is
// no tool.
func rowOf(name string) toolRow { return toolRows[name] }

// catalogTools is the tool catalog as the model is shown it: one copy
// for every prompt, which only reads it (a copy a model call was 1.3% of
// the bytes purser allocated at 1,000 bench users). Its capacity is its
// length, so an append to it copies it.
func catalogTools() []ToolSpec { return catalog }

var catalog = slices.Clip(contracts.Tools())

// mutates is the default confirmation policy: a mutation, or a name the
// orchestrator does not know, waits for a yes.
func mutates(name string) bool {
	if isClarify(name) {
		return false
	}
	t, ok := lookupTool(name)
	return !ok || t.kind == contracts.KindMutation
}

// isClarify reports whether name is the built-in ask_clarification tool:
// a question to the person, never a call.
func isClarify(name string) bool { return name == contracts.ToolAskClarification }

// clarifyQuestion reads the question of an ask_clarification call.
func clarifyQuestion(args json.RawMessage) (string, error) {
	var a contracts.AskClarificationArgs
	if err := contracts.Decode(args, &a); err != nil {
		return "", err
	}
	return a.Question, nil
}

// canonicalArgs validates raw as tool's arguments and fills the server's
// defaults, so that what the user approves is exactly what runs.
func canonicalArgs(name string, raw json.RawMessage, s State, env Env) (json.RawMessage, error) {
	t, ok := lookupTool(name)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	v, err := t.spec.DecodeArgs(raw)
	if err != nil {
		return nil, err
	}
	if t.fill != nil {
		if err := t.fill(v, s, env); err != nil {
			return nil, err
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fillAddExpense gives an expense the default currency and today's date
// in the user's time zone when the person named none.
func fillAddExpense(args any, s State, env Env) error {
	a, ok := args.(*contracts.AddExpenseArgs)
	if !ok {
		return fmt.Errorf("add_expense args are %T", args)
	}
	if a.Currency == nil {
		c := env.DefaultCurrency
		a.Currency = &c
	}
	if _, err := a.Amount.Minor(*a.Currency); err != nil {
		return err // e.g. decimals the default currency does not have
	}
	if a.Date == nil {
		d := env.Now.In(userLoc(s)).Format(time.DateOnly)
		a.Date = &d
	}
	return nil
}
