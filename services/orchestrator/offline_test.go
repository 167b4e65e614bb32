package orchestrator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// firstDecision is what the offline model does with text in a fresh
// conversation (or after history), on Sunday 22 Nov 2026 in London.
func firstDecision(t *testing.T, history []Entry, text string) Decision {
	t.Helper()
	d, err := Offline{}.Decide(context.Background(), Prompt{Text: text, Now: sunday, Timezone: "Europe/London", History: history})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestOfflineUnderstands(t *testing.T) {
	tests := []struct {
		give     string
		wantTool string
		wantArgs string // canonical JSON; "" for a non-call
		wantText string // clarify question or answer prefix
	}{
		{"I spent £12.50 on lunch today", contracts.ToolAddExpense, `{"item":"lunch","amount":"12.50","currency":"GBP","date":"2026-11-22"}`, ""},
		{"add electricity bill £200", contracts.ToolAddExpense, `{"item":"electricity bill","amount":"200","currency":"GBP","date":"2026-11-22"}`, ""},
		{"taxi $23.40 last Friday", contracts.ToolAddExpense, `{"item":"taxi","amount":"23.40","currency":"USD","date":"2026-11-20"}`, ""},
		{"coffee €3 on 3 Nov in eating out", contracts.ToolAddExpense, `{"item":"coffee","amount":"3","currency":"EUR","date":"2026-11-03","category":"eating out"}`, ""},
		{"paid 40 pounds for groceries yesterday", contracts.ToolAddExpense, `{"item":"groceries","amount":"40","currency":"GBP","date":"2026-11-21"}`, ""},
		{"I want to add an item", "", "", askAddWhat},
		{"add coffee", "", "", "How much was coffee?"},
		{"I spent £20", "", "", "What was the £20 for?"},
		{"what did I spend this month?", contracts.ToolGetBalance, `{"range":"this_month"}`, ""},
		{"how much did I spend last week", contracts.ToolGetBalance, `{"range":"last_week"}`, ""},
		{"total for the last 30 days", contracts.ToolGetBalance, `{"range":"last_30_days"}`, ""},
		{"show my expenses last month", contracts.ToolListExpenses, `{"range":"last_month"}`, ""},
		{"list expenses on groceries this month", contracts.ToolListExpenses, `{"range":"this_month","category":"groceries"}`, ""},
		{"list my expenses in October", contracts.ToolListExpenses, `{"range":"2026-10"}`, ""},
		{"delete expense 3", contracts.ToolDeleteExpense, `{"id":3}`, ""},
		{"delete that", "", "", askWhichNum},
		{"change expense 2 to £15", contracts.ToolUpdateExpense, `{"id":2,"amount":"15"}`, ""},
		{"change expense 2 date to yesterday", contracts.ToolUpdateExpense, `{"id":2,"date":"2026-11-21"}`, ""},
		{"rename expense 5 to team lunch", contracts.ToolUpdateExpense, `{"id":5,"item":"team lunch"}`, ""},
		{"update expense 7", "", "", "What should I change expense 7 to?"},
		{"Find my last Visa statement and process it", contracts.ToolSearchGmail, `{"query":"visa statement"}`, ""},
		{"check my email for bank statements", contracts.ToolSearchGmail, `{"query":"statement"}`, ""},
		{"what was my most recent import?", contracts.ToolGetRecentImports, `{"limit":1}`, ""},
		{"which transactions need review?", contracts.ToolGetTransactions, `{"review_status":"needs_review"}`, ""},
		{"how much did I spend at Tesco?", contracts.ToolGetTransactions, `{"vendor":"Tesco"}`, ""},
		{"hello", "", "", "Hello!"},
		{"what's the weather like", "", "", "I'm not sure"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			d := firstDecision(t, nil, tt.give)
			if tt.wantTool == "" {
				got := d.Question + d.Content
				if len(d.Calls) != 0 || !strings.HasPrefix(got, tt.wantText) {
					t.Fatalf("decision = %+v, want text starting %q", d, tt.wantText)
				}
				return
			}
			if d.Kind != DecisionToolCalls || len(d.Calls) != 1 || d.Calls[0].Tool != tt.wantTool {
				t.Fatalf("decision = %+v, want a %s call", d, tt.wantTool)
			}
			got, err := canonicalArgs(d.Calls[0].Tool, d.Calls[0].Args, State{Timezone: "Europe/London"}, testEnv(sunday))
			if err != nil {
				t.Fatalf("offline model produced invalid args %s: %v", d.Calls[0].Args, err)
			}
			if string(got) != tt.wantArgs {
				t.Errorf("args = %s, want %s", got, tt.wantArgs)
			}
		})
	}
}

func TestOfflineFollowsUpItsQuestion(t *testing.T) {
	h := []Entry{{Role: "user", Text: "I want to add an item"}, {Role: "assistant", Text: askAddWhat}}
	d := firstDecision(t, h, "a sandwich, £4.20")
	if len(d.Calls) != 1 || string(d.Calls[0].Args) != `{"item":"sandwich","amount":"4.20","currency":"GBP","date":"2026-11-22"}` {
		t.Fatalf("follow-up = %+v %s", d, argsOf(d))
	}
	h = []Entry{{Role: "user", Text: "add coffee yesterday"}, {Role: "assistant", Text: "How much was coffee?"}}
	d = firstDecision(t, h, "£3")
	if len(d.Calls) != 1 || string(d.Calls[0].Args) != `{"item":"coffee","amount":"3","currency":"GBP","date":"2026-11-21"}` {
		t.Fatalf("follow-up = %+v %s", d, argsOf(d))
	}
}

func argsOf(d Decision) string {
	if len(d.Calls) == 0 {
		return ""
	}
	return string(d.Calls[0].Args)
}

func TestOfflineAnswersListEveryItemWithATotal(t *testing.T) {
	list := contracts.ExpenseList{Range: "this_month", From: "2026-11-01", To: "2026-11-30", Expenses: []contracts.ExpenseView{
		{ID: 1, Item: "groceries", Amount: contracts.Money{Minor: 4235, Currency: "GBP"}, Date: "2026-11-20", Category: "groceries"},
		{ID: 2, Item: "train ticket", Amount: contracts.Money{Minor: 1280, Currency: "GBP"}, Date: "2026-11-21"},
	}, Totals: []contracts.Money{{Minor: 5515, Currency: "GBP"}}}
	data, _ := json.Marshal(list)
	d, _ := Offline{}.Decide(context.Background(), Prompt{Text: "show my expenses", Steps: []StepRecord{{CallID: "cabc", Tool: contracts.ToolListExpenses, OK: true, Data: data}}})
	want := "Your expenses this month:\n- #1 2026-11-20 groceries, £42.35 (groceries)\n- #2 2026-11-21 train ticket, £12.80\nTotal: £55.15 (2 expenses)."
	if d.Content != want {
		t.Fatalf("answer =\n%s\nwant\n%s", d.Content, want)
	}
	if strings.Contains(d.Content, "cabc") {
		t.Error("answer shows an internal id")
	}
}

func TestOfflineStatementFlow(t *testing.T) {
	found, _ := json.Marshal(contracts.MailSearch{Messages: []contracts.MailSummary{{ID: "m42", From: "Visa", Subject: "Your September statement", Attachments: []string{"september_statement.csv"}}}})
	p := Prompt{Text: "Find my last Visa statement and process it", Steps: []StepRecord{{Tool: contracts.ToolSearchGmail, OK: true, Data: found}}}
	d, _ := Offline{}.Decide(context.Background(), p)
	if len(d.Calls) != 1 || d.Calls[0].Tool != contracts.ToolFetchEmailAttachments || string(d.Calls[0].Args) != `{"message_id":"m42"}` {
		t.Fatalf("after search = %+v", d)
	}
	fetched, _ := json.Marshal(contracts.AttachmentsFetched{MessageID: "m42", Documents: []contracts.QueuedDocument{{Filename: "september_statement.csv", Status: "queued"}}})
	p.Steps = append(p.Steps, StepRecord{Tool: contracts.ToolFetchEmailAttachments, OK: true, Data: fetched, Decision: "approved"})
	d, _ = Offline{}.Decide(context.Background(), p)
	if !strings.Contains(d.Content, "importing september_statement.csv") {
		t.Fatalf("after import = %q", d.Content)
	}
}

func TestFormatMoney(t *testing.T) {
	for give, want := range map[contracts.Money]string{
		{Minor: 0, Currency: "GBP"}: "£0.00", {Minor: 5, Currency: "USD"}: "$0.05", {Minor: 123456789, Currency: "EUR"}: "€1,234,567.89",
		{Minor: -1250, Currency: "GBP"}: "-£12.50", {Minor: 1000, Currency: "CHF"}: "10.00 CHF",
	} {
		if got := FormatMoney(give); got != want {
			t.Errorf("FormatMoney(%+v) = %q, want %q", give, got, want)
		}
	}
}
