package toolrunner_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

type allowAll struct{}

func (allowAll) Allow(context.Context, string, int, time.Time) (bool, time.Duration, error) {
	return true, 0, nil
}

// Every tool refuses arguments that are malformed, of the wrong type, out
// of range or carry unknown fields, with invalid_args and a message naming
// the field; good arguments pass validation (mutations then stop at the
// confirmation gate, which proves they were not refused as invalid).
func TestEveryToolValidatesItsArguments(t *testing.T) {
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	tools := append(toolrunner.Catalog(), toolrunner.MailTools(mailbox{}, nil)...)
	r := runnerWith(tools, toolrunner.FromStore(st), allowAll{})
	tests := []struct {
		tool, args string
		wantCode   string // "" = ok
	}{
		{contracts.ToolAddExpense, addArgs, contracts.CodeNotConfirmed},
		{contracts.ToolAddExpense, `{"item":"x","amount":"0"}`, contracts.CodeInvalidArgs},
		{contracts.ToolAddExpense, `{"item":"","amount":"3"}`, contracts.CodeInvalidArgs},
		{contracts.ToolAddExpense, `{"item":"x","amount":3}`, contracts.CodeNotConfirmed}, // a number is read exactly
		{contracts.ToolAddExpense, `{"item":"x","amount":1e308}`, contracts.CodeInvalidArgs},
		{contracts.ToolAddExpense, `{"item":"x","amount":"3","currency":"XXX"}`, contracts.CodeInvalidArgs},
		{contracts.ToolAddExpense, `{"item":"x","amount":"3","user_id":"bob"}`, contracts.CodeInvalidArgs},
		{contracts.ToolAddExpense, `not json`, contracts.CodeInvalidArgs},
		{contracts.ToolUpdateExpense, `{"id":1,"amount":"4.00"}`, contracts.CodeNotConfirmed},
		{contracts.ToolUpdateExpense, `{"id":-1,"amount":"4.00"}`, contracts.CodeInvalidArgs},
		{contracts.ToolUpdateExpense, `{"id":1,"colour":"red"}`, contracts.CodeInvalidArgs},
		{contracts.ToolDeleteExpense, `{"id":2}`, contracts.CodeNotConfirmed},
		{contracts.ToolDeleteExpense, `{}`, contracts.CodeInvalidArgs},
		{contracts.ToolListExpenses, `{"range":"last_month","category":"bills"}`, ""},
		{contracts.ToolListExpenses, `{"range":"next_month"}`, contracts.CodeInvalidArgs},
		{contracts.ToolListExpenses, `{"range":"2026-02-29..2026-03-01"}`, contracts.CodeInvalidArgs},
		{contracts.ToolGetBalance, `{}`, ""},
		{contracts.ToolGetBalance, `{"range":"last_400_days"}`, ""},
		{contracts.ToolGetBalance, `{"range":["today"]}`, contracts.CodeInvalidArgs},
		{contracts.ToolGetTransactions, `{"from_date":"2026-10-01","to_date":"2026-10-31","vendor":"Tesco","limit":10}`, ""},
		{contracts.ToolGetTransactions, `{"from_date":"2026-10-31","to_date":"2026-10-01"}`, contracts.CodeInvalidArgs},
		{contracts.ToolGetTransactions, `{"limit":0}`, contracts.CodeInvalidArgs},
		{contracts.ToolGetTransactions, `{"review_status":"later"}`, contracts.CodeInvalidArgs},
		{contracts.ToolSearchGmail, `{"query":"visa statement","days":30,"limit":3}`, ""},
		{contracts.ToolSearchGmail, `{"query":""}`, contracts.CodeInvalidArgs},
		{contracts.ToolSearchGmail, `{"query":"x","days":0}`, contracts.CodeInvalidArgs},
		{contracts.ToolFetchEmailAttachments, `{"message_id":"m-visa"}`, contracts.CodeNotConfirmed},
		{contracts.ToolFetchEmailAttachments, `{"message_id":"a/b"}`, contracts.CodeInvalidArgs},
		{contracts.ToolFetchEmailAttachments, `{"message_id":"m1","forward_to":"x@y"}`, contracts.CodeInvalidArgs},
		{contracts.ToolGetRecentImports, `{"days":7,"limit":2}`, ""},
		{contracts.ToolGetRecentImports, `{"limit":100}`, contracts.CodeInvalidArgs},
		{contracts.ToolSummarizeSpending, `{"by":"month","range":"all_time"}`, ""},
		{contracts.ToolSummarizeSpending, `{"by":"merchant","limit":3}`, ""},
		{contracts.ToolSummarizeSpending, `{"by":"week"}`, contracts.CodeInvalidArgs},
		{contracts.ToolBiggestExpenses, `{"range":"2025","limit":5}`, ""},
		{contracts.ToolBiggestExpenses, `{"limit":500}`, contracts.CodeInvalidArgs},
		{contracts.ToolRecurringPayments, `{}`, ""},
		{contracts.ToolRecurringPayments, `{"merchant":"netflix"}`, contracts.CodeInvalidArgs},
	}
	for i, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			req := request("acme", "ann", "v"+string(rune('a'+i)), tt.tool, tt.args)
			res, err := r.Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantCode == "" && !res.OK:
				t.Fatalf("refused: %+v", res.Error)
			case tt.wantCode == "" && !json.Valid(res.Data):
				t.Fatalf("data is not JSON: %s", res.Data)
			case tt.wantCode != "" && (res.OK || res.Error.Code != tt.wantCode):
				t.Fatalf("result %+v %s, want error %s", res.Error, res.Data, tt.wantCode)
			case tt.wantCode == contracts.CodeInvalidArgs && len(res.Error.Message) < 5:
				t.Fatalf("message %q does not say what was wrong", res.Error.Message)
			}
		})
	}
}
