package toolrunner

import (
	"log/slog"
	"slices"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// AddExpenseTool is the catalog's add_expense.
func AddExpenseTool() Tool {
	i := slices.IndexFunc(Catalog(), func(t Tool) bool { return t.Name == contracts.ToolAddExpense })
	return Catalog()[i]
}

// Catalog is every tool this package implements, with its limits.
func Catalog() []Tool {
	const outputCap = 64 << 10
	return []Tool{
		{Name: contracts.ToolAddExpense, Kind: contracts.KindMutation, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 30, Run: addExpense},
		{Name: contracts.ToolUpdateExpense, Kind: contracts.KindMutation, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 30, Run: updateExpense},
		{Name: contracts.ToolDeleteExpense, Kind: contracts.KindMutation, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 30, Run: deleteExpense},
		{Name: contracts.ToolListExpenses, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: listExpenses},
		{Name: contracts.ToolGetBalance, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: getBalance},
		{Name: contracts.ToolListLedger, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: listLedger},
		{Name: contracts.ToolGetTransactions, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: getTransactions},
		{Name: contracts.ToolSetPreferences, Kind: contracts.KindMutation, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 10, Run: setPreferences},
		{Name: contracts.ToolGetChatHistory, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: getChatHistory},
		{Name: contracts.ToolSummarizeSpending, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: summarizeSpending},
		{Name: contracts.ToolBiggestExpenses, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: biggestExpenses},
		{Name: contracts.ToolRecurringPayments, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 30, Run: recurringPayments},
		{Name: contracts.ToolListCategories, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: listCategories},
		{Name: contracts.ToolAddCategory, Kind: contracts.KindMutation, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 30, Run: addCategory},
		{Name: contracts.ToolListRules, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: listRules},
		{Name: contracts.ToolSetRule, Kind: contracts.KindMutation, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 30, Run: setRule},
		{Name: contracts.ToolDeleteRule, Kind: contracts.KindMutation, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 30, Run: deleteRule},
		{Name: contracts.ToolRecategorize, Kind: contracts.KindMutation, Deadline: 10 * time.Second, OutputCap: outputCap, PerMinute: 30, Run: recategorize},
		{Name: contracts.ToolMatchEntries, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: matchEntries},
		{Name: contracts.ToolUpdateTransaction, Kind: contracts.KindMutation, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 30, Run: updateTransaction},
		{Name: contracts.ToolGetLastChange, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: outputCap, PerMinute: 60, Run: getLastChange},
		// Lexical only here; the app swaps in its Searcher (semantic too
		// when an embeddings server is configured).
		NewSearcher(nil, nil, 0, nil, slog.New(slog.DiscardHandler)).Tool(),
		{Name: contracts.ToolUndoChange, Kind: contracts.KindMutation, Deadline: 15 * time.Second, OutputCap: outputCap, PerMinute: 10, Run: undoChange},
	}
}

// Select returns the tools of all named in names, all when names is empty.
func Select(all []Tool, names []string) []Tool {
	if len(names) == 0 {
		return all
	}
	var out []Tool
	for _, t := range all {
		if slices.Contains(names, t.Name) {
			out = append(out, t)
		}
	}
	return out
}
