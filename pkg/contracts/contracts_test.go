package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

var sentAt = time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)

// goldens are one valid example of every wire type. Each is encoded and
// compared with testdata/<name>.json, and the file must decode back into an
// equal value, so an incompatible change to a type shows up here.
func goldens() map[string]struct {
	value any
	fresh func() any
} {
	total := int64(2)
	// frame42 is a stored frame as the notifier's replies carry it.
	frame42 := json.RawMessage(`{"type":"answer","seq":42,"conversation_id":"c1","turn_id":"t1","at":"2026-11-22T09:30:00Z","answer":{"turn_id":"t1","content":"You spent £12.50 this month."}}`)
	return map[string]struct {
		value any
		fresh func() any
	}{
		"user_turn_text":    {&UserTurn{TurnID: "t1", TenantID: "demo", UserID: "demo", Roles: []string{"owner"}, ConversationID: "c1", Text: "I spent £12.50 on lunch today", Timezone: "Europe/London", SentAt: sentAt}, func() any { return new(UserTurn) }},
		"user_turn_confirm": {&UserTurn{TurnID: "t2", TenantID: "demo", UserID: "demo", Roles: []string{"member"}, ConversationID: "c1", Confirm: &Confirm{ProposalID: "p1", Decision: "edit", Args: json.RawMessage(`{"item":"lunch","amount":"13.00"}`)}, Timezone: "UTC", SentAt: sentAt}, func() any { return new(UserTurn) }},
		"tool_request":      {&ToolRequest{CallID: "t1-s1-c0", TurnID: "t1", TenantID: "demo", UserID: "demo", Roles: []string{"owner"}, ConversationID: "c1", Tool: ToolAddExpense, Args: json.RawMessage(`{"item":"lunch","amount":"12.50"}`), ProposalID: "p1", Timezone: "Europe/London", Deadline: sentAt.Add(30 * time.Second)}, func() any { return new(ToolRequest) }},
		"tool_result_ok":    {&ToolResult{CallID: "t1-s1-c0", TurnID: "t1", Tool: ToolListExpenses, OK: true, Data: json.RawMessage(`{"expenses":[]}`), Total: &total, Meta: ToolMeta{DurationMS: 3, Bytes: 15}}, func() any { return new(ToolResult) }},
		"tool_result_error": {&ToolResult{CallID: "t1-s1-c1", Tool: ToolAddExpense, OK: false, Error: &ToolError{Code: CodeRateLimited, Message: "Too many calls; try again in 20 seconds.", RetryAfter: 20}, Meta: ToolMeta{DurationMS: 1}}, func() any { return new(ToolResult) }},
		"clarify":           {&Clarify{TurnID: "t1", Question: "What item do you want to add, and how much was it?"}, func() any { return new(Clarify) }},
		"proposal":          {&Proposal{ProposalID: "p1", TurnID: "t1", Tool: ToolAddExpense, Args: json.RawMessage(`{"item":"electricity bill","amount":"200.00","currency":"GBP","date":"2026-11-22"}`), Summary: "Add expense 'electricity bill' £200.00 on 2026-11-22?", ExpiresAt: sentAt.Add(15 * time.Minute)}, func() any { return new(Proposal) }},
		"tool_progress":     {&ToolProgress{CallID: "t1-s1-c0", Tool: ToolGetBalance, Status: "started"}, func() any { return new(ToolProgress) }},
		"answer": {&Answer{TurnID: "t1", Content: "Added lunch, £12.50 on 2026-11-22.", Citations: []Citation{{CallID: "t1-s1-c0", Tool: ToolAddExpense}},
			Added:   &ExpenseView{ID: 3, Item: "lunch", Amount: Money{Minor: 1250, Currency: "GBP"}, Date: "2026-11-22", Category: "food"},
			Balance: &Balance{Range: "this_month", From: "2026-11-01", To: "2026-11-30", Total: []Money{{Minor: 1250, Currency: "GBP"}}, Count: 1}}, func() any { return new(Answer) }},
		"turn_error":                     {&TurnError{TurnID: "t1", Code: CodeLimit, Message: "That needed more than 5 steps; please ask for less at once."}, func() any { return new(TurnError) }},
		"notification":                   {&Notification{ID: "n1", Kind: "import_completed", Title: "Imported 12 transactions", Body: "Imported 12 transactions from september_statement.csv", Data: json.RawMessage(`{"imported":12}`), CreatedAt: sentAt}, func() any { return new(Notification) }},
		"frame_message":                  {&MessageFrame{Type: FrameMessage, ID: "m1", ConversationID: "c1", Text: "what did I spend this month?", Timezone: "Europe/London"}, func() any { return new(MessageFrame) }},
		"frame_confirm":                  {&ConfirmFrame{Type: FrameConfirm, ID: "m2", ProposalID: "p1", Decision: "approve"}, func() any { return new(ConfirmFrame) }},
		"answer_batch":                   {&Answer{TurnID: "t3", Content: "Done: 2 of 2 changes made.", Batch: []BatchItem{{ProposalID: "p1", Status: "executed", Summary: "Added expense #3: lunch, £12.50 on 2026-11-22."}, {ProposalID: "p2", Status: "failed", Summary: "I couldn't delete that expense: expense #9 does not exist"}}}, func() any { return new(Answer) }},
		"notification_proposal_expiring": {&Notification{ID: "pexp-p1", Kind: "proposal_expiring", Title: "A change waits for your yes until 10:30 UTC", Body: "Add expense 'lunch' £12.50?", Data: json.RawMessage(`{"proposal_id":"p1","conversation_id":"c1","expires_at":"2026-11-22T10:30:00Z"}`), CreatedAt: sentAt}, func() any { return new(Notification) }},
		"frame_confirm_all":              {&ConfirmFrame{Type: FrameConfirm, ID: "m4", ConversationID: "c1", ProposalIDs: []string{"p1", "p2"}, Decision: DecisionApproveAll}, func() any { return new(ConfirmFrame) }},
		"frame_message_locale":           {&MessageFrame{Type: FrameMessage, ID: "m5", ConversationID: "c1", Text: "combien ai-je dépensé ce mois-ci ?", Locale: "fr-FR"}, func() any { return new(MessageFrame) }},
		"user_turn_confirm_all":          {&UserTurn{TurnID: "t3", TenantID: "demo", UserID: "demo", Roles: []string{"owner"}, ConversationID: "c1", Confirm: &Confirm{ProposalIDs: []string{"p1", "p2", "p3"}, Decision: DecisionApproveAll}, Locale: "fr-FR", SentAt: sentAt}, func() any { return new(UserTurn) }},
		"frame_resume":                   {&ResumeFrame{Type: FrameResume, AfterSeq: 41}, func() any { return new(ResumeFrame) }},
		"frame_answer":                   {&ServerFrame{Type: FrameAnswer, Seq: 42, ConversationID: "c1", TurnID: "t1", At: sentAt, Answer: &Answer{TurnID: "t1", Content: "You spent £12.50 this month."}}, func() any { return new(ServerFrame) }},
		"frame_token":                    {&ServerFrame{Type: FrameToken, ConversationID: "c1", TurnID: "t1", At: sentAt, Token: &TokenBody{Text: "You spent", Index: 0}}, func() any { return new(ServerFrame) }},
		"frame_error":                    {&ServerFrame{Type: FrameError, At: sentAt, Error: &ErrorBody{Code: ErrCodeBadFrame, Message: "conversation_id: must be 1-64 letters, digits, '_' or '-'", ID: "m3"}}, func() any { return new(ServerFrame) }},

		// The notifier's requests and replies, one pair per op.
		"inbox_resume_request":        {&ResumeRequest{AfterSeq: 41, Limit: 200}, func() any { return new(ResumeRequest) }},
		"inbox_resume_reply":          {&ResumeReply{Frames: []json.RawMessage{frame42}, More: true}, func() any { return new(ResumeReply) }},
		"inbox_notifications_request": {&NotificationsRequest{Unread: true, Limit: 50}, func() any { return new(NotificationsRequest) }},
		"inbox_notifications_reply":   {&NotificationsReply{Notifications: []Notification{{ID: "n1", Kind: "import_completed", Title: "Imported 12 transactions", CreatedAt: sentAt, Read: true}}}, func() any { return new(NotificationsReply) }},
		"inbox_read_request":          {&MarkReadRequest{ID: "n1"}, func() any { return new(MarkReadRequest) }},
		"inbox_read_reply":            {&MarkReadReply{InboxFailure{Error: &InboxError{Code: InboxNotFound, Message: "no such notification"}}}, func() any { return new(MarkReadReply) }},
		"inbox_turn_request":          {&TurnFramesRequest{TurnID: "t1"}, func() any { return new(TurnFramesRequest) }},
		"inbox_turn_reply":            {&TurnFramesReply{Frames: []json.RawMessage{frame42}}, func() any { return new(TurnFramesReply) }},
		"inbox_audit_request":         {&AuditRequest{Limit: 50, Scope: AuditScopeTenant}, func() any { return new(AuditRequest) }},
		"inbox_audit_reply": {&AuditReply{Audit: []AuditEntry{{ID: "a1", UserID: "demo", Tool: ToolAddExpense, CallID: "t1-s1-c0", Outcome: "ok", Args: json.RawMessage(`{"item":"lunch","amount":"12.50"}`), DurationMS: 3, CreatedAt: sentAt},
			{ID: "a0", UserID: "bob", Tool: ToolAddExpense, CallID: "t0-s1-c0", Outcome: "ok", DurationMS: 2, CreatedAt: sentAt}}}, func() any { return new(AuditReply) }},
		"inbox_match_request":         {&MatchRequest{ConversationID: "c1", Tool: ToolDeleteExpense, Args: json.RawMessage(`{"id":3}`)}, func() any { return new(MatchRequest) }},
		"inbox_match_reply":           {&MatchReply{ProposalID: "p1"}, func() any { return new(MatchReply) }},
		"inbox_user_message_request":  {&UserMessageRequest{TurnID: "t1", ConversationID: "c1", ID: "m1", Text: "what did I spend this month?"}, func() any { return new(UserMessageRequest) }},
		"inbox_user_message_reply":    {&UserMessageReply{Seen: true}, func() any { return new(UserMessageReply) }},
		"inbox_conversations_request": {&ConversationsRequest{Limit: 50}, func() any { return new(ConversationsRequest) }},
		"inbox_conversations_reply":   {&ConversationsReply{Conversations: []ConversationSummary{{ID: "c1", Title: "what did I spend this month?", CreatedAt: sentAt, UpdatedAt: sentAt.Add(time.Minute)}}}, func() any { return new(ConversationsReply) }},
		"inbox_history_request":       {&HistoryRequest{ConversationID: "c1", BeforeSeq: 43, Limit: 50}, func() any { return new(HistoryRequest) }},
		"inbox_history_reply":         {&HistoryReply{Frames: []json.RawMessage{frame42}}, func() any { return new(HistoryReply) }},
		"inbox_ledger_request":        {&LedgerRequest{From: "2026-11-01", To: "2026-11-30", Query: "sushi", Category: "food", Limit: 50, Cursor: "2026-11-20.expense.12"}, func() any { return new(LedgerRequest) }},
		"inbox_ledger_reply": {&LedgerReply{Entries: []LedgerEntry{
			{ID: "transaction-40", Kind: LedgerKindTransaction, Date: "2026-11-21", Amount: Money{Minor: 250000, Currency: "EUR"}, Description: "SALARY ACME", Category: "income", Source: "doc-7", Links: []LedgerLink{}},
			{ID: "expense-12", Kind: LedgerKindExpense, Date: "2026-11-20", Amount: Money{Minor: -4217, Currency: "EUR"}, Description: "zanzibar sushi", Category: "food", Links: []LedgerLink{}},
		}, NextCursor: "2026-11-20.expense.12"}, func() any { return new(LedgerReply) }},
		"inbox_search_request": {&SearchRequest{Query: "tesco", Kind: SearchKindEntry, Limit: 10}, func() any { return new(SearchRequest) }},
		"inbox_search_reply": {&SearchReply{SearchResults: SearchResults{Mode: SearchLexical, Results: []SearchResult{
			{Kind: SearchKindEntry, ID: "transaction-40", Title: "Tesco", Snippet: "TESCO STORES 2231 · groceries", Date: "2026-11-21", Amount: &Money{Minor: -4217, Currency: "GBP"}, Score: 1, URL: "/v1/ledger/entries/transaction-40"},
		}}}, func() any { return new(SearchReply) }},
		"answer_cited":                 {&Answer{TurnID: "t1", Content: "I found 1 payment to Tesco.", Citations: []Citation{{CallID: "t1-s1-c0", Tool: ToolSearch, Kind: SearchKindEntry, ID: "transaction-40", Title: "Tesco", URL: "/v1/ledger/entries/transaction-40", Score: 1}}}, func() any { return new(Answer) }},
		"inbox_ledger_summary_request": {&LedgerSummaryRequest{From: "2026-11-01", To: "2026-11-30"}, func() any { return new(LedgerSummaryRequest) }},
		"inbox_ledger_summary_reply": {&LedgerSummaryReply{From: "2026-11-01", To: "2026-11-30", Count: 2, Spending: []Money{{Minor: 4217, Currency: "EUR"}},
			Income: []Money{{Minor: 250000, Currency: "EUR"}}, ByCategory: []CategorySpending{{Category: "food", Spending: []Money{{Minor: 4217, Currency: "EUR"}}}}}, func() any { return new(LedgerSummaryReply) }},
	}
}

// The notifier's requests are decoded like every message: unknown fields,
// another op's fields and missing names are refused.
func TestInboxRequestsReject(t *testing.T) {
	tests := []struct {
		name      string
		give      string
		into      any
		wantField string
	}{
		{"unknown field", `{"after":1}`, new(ResumeRequest), "after"},
		{"another op's field", `{"after_seq":1,"unread":true}`, new(ResumeRequest), "unread"},
		{"negative seq", `{"after_seq":-1}`, new(ResumeRequest), "after_seq"},
		{"page too large", `{"limit":1001}`, new(NotificationsRequest), "limit"},
		{"read without id", `{}`, new(MarkReadRequest), "id"},
		{"read of a dotted id", `{"id":"n.1"}`, new(MarkReadRequest), "id"},
		{"turn without id", `{}`, new(TurnFramesRequest), "turn_id"},
		{"match without tool", `{"conversation_id":"c1"}`, new(MatchRequest), "tool"},
		{"match without conversation", `{"tool":"add_expense"}`, new(MatchRequest), "conversation_id"},
		{"user message without text", `{"turn_id":"t1","conversation_id":"c1"}`, new(UserMessageRequest), "text"},
		{"user message with a control character", `{"turn_id":"t1","conversation_id":"c1","text":"a\u0007b"}`, new(UserMessageRequest), "text"},
		{"history without conversation", `{"before_seq":3}`, new(HistoryRequest), "conversation_id"},
		{"tenant in the body", `{"tenant_id":"evil"}`, new(ConversationsRequest), "tenant_id"},
		{"ledger with a bad date", `{"from":"2026-13-01"}`, new(LedgerRequest), "from"},
		{"ledger page too large", `{"limit":201}`, new(LedgerRequest), "limit"},
		{"ledger with a user", `{"user_id":"bob"}`, new(LedgerRequest), "user_id"},
		{"summary with a bad date", `{"to":"30/11/2026"}`, new(LedgerSummaryRequest), "to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Decode([]byte(tt.give), tt.into)
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Decode(%s) = %v, want a *ValidationError", tt.give, err)
			}
			if verr.Field != tt.wantField {
				t.Errorf("field = %q, want %q (%v)", verr.Field, tt.wantField, err)
			}
		})
	}
}

// compactJSON compares raw JSON by content, not layout.
var compactJSON = cmp.Transformer("compact", func(r json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, r); err != nil {
		return string(r)
	}
	return b.String()
})

func TestGoldens(t *testing.T) {
	for name, g := range goldens() {
		t.Run(name, func(t *testing.T) {
			if err := Validate(g.value); err != nil {
				t.Fatalf("golden value is invalid: %v", err)
			}
			got, err := json.MarshalIndent(g.value, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run with -update to create): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("encoding changed (-golden +got):\n%s", diff)
			}
			back := g.fresh()
			if err := Decode(want, back); err != nil {
				t.Fatalf("golden no longer decodes: %v", err)
			}
			if diff := cmp.Diff(g.value, back, compactJSON); diff != "" {
				t.Errorf("decode(golden) differs (-value +decoded):\n%s", diff)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	valid := `{"turn_id":"t1","tenant_id":"demo","user_id":"demo","roles":["owner"],"conversation_id":"c1","text":"hi","timezone":"UTC","sent_at":"2026-11-22T09:30:00Z"}`
	with := func(from, to string) string { return strings.Replace(valid, from, to, 1) }
	tests := []struct {
		name      string
		give      string
		wantField string
		wantIn    string
	}{
		{"bad json", `{"turn_id":`, "", "JSON"},
		{"not an object", `[1,2]`, "", "object"},
		{"trailing data", valid + `{}`, "", "after the JSON object"},
		{"unknown field", with(`"text":"hi"`, `"text":"hi","tool":"delete_expense"`), "tool", "unknown field"},
		{"wrong type", with(`"roles":["owner"]`, `"roles":"owner"`), "roles", "a list"},
		{"missing id", with(`"turn_id":"t1",`, ``), "turn_id", "is required"},
		{"dot in id", with(`"conversation_id":"c1"`, `"conversation_id":"c.1"`), "conversation_id", "letters, digits"},
		{"star in id", with(`"tenant_id":"demo"`, `"tenant_id":"*"`), "tenant_id", "letters, digits"},
		{"gt in id", with(`"user_id":"demo"`, `"user_id":">"`), "user_id", "letters, digits"},
		{"long id", with(`"turn_id":"t1"`, `"turn_id":"`+strings.Repeat("a", 65)+`"`), "turn_id", "letters, digits"},
		{"unknown role", with(`["owner"]`, `["admin"]`), "roles[0]", "one of"},
		{"no text or confirm", with(`"text":"hi",`, ``), "text", "required"},
		{"text and confirm", with(`"text":"hi"`, `"text":"hi","confirm":{"proposal_id":"p1","decision":"approve"}`), "text", "not be given together"},
		{"bad decision", with(`"text":"hi"`, `"confirm":{"proposal_id":"p1","decision":"maybe"}`), "confirm.decision", "one of"},
		{"edit without args", with(`"text":"hi"`, `"confirm":{"proposal_id":"p1","decision":"edit"}`), "confirm.args", "required"},
		{"approve with args", with(`"text":"hi"`, `"confirm":{"proposal_id":"p1","decision":"approve","args":{"id":1}}`), "confirm.args", ""},
		{"approve_all with one id", with(`"text":"hi"`, `"confirm":{"decision":"approve_all","proposal_ids":["p1"]}`), "confirm.proposal_ids", "too few"},
		{"approve_all with 21 ids", with(`"text":"hi"`, `"confirm":{"decision":"approve_all","proposal_ids":["p1"`+strings.Repeat(`,"p2"`, 20)+`]}`), "confirm.proposal_ids", "too many"},
		{"approve_all naming an id twice", with(`"text":"hi"`, `"confirm":{"decision":"approve_all","proposal_ids":["p1","p1"]}`), "confirm.proposal_ids", "same id twice"},
		{"approve_all with proposal_id", with(`"text":"hi"`, `"confirm":{"proposal_id":"p1","decision":"approve_all","proposal_ids":["p1","p2"]}`), "confirm.proposal_id", "decision is approve_all"},
		{"approve_all without ids", with(`"text":"hi"`, `"confirm":{"decision":"approve_all"}`), "confirm.proposal_ids", "required when decision is approve_all"},
		{"approve_all with a bad id", with(`"text":"hi"`, `"confirm":{"decision":"approve_all","proposal_ids":["p1","p.2"]}`), "confirm.proposal_ids[1]", "letters, digits"},
		{"approve with proposal_ids", with(`"text":"hi"`, `"confirm":{"proposal_id":"p1","decision":"approve","proposal_ids":["p1","p2"]}`), "confirm.proposal_ids", "only allowed when decision is approve_all"},
		{"approve without proposal_id", with(`"text":"hi"`, `"confirm":{"decision":"approve"}`), "confirm.proposal_id", "required unless decision is approve_all"},
		{"bad locale", with(`"UTC"`, `"UTC","locale":"fr_FR; drop"`), "locale", ""},
		{"bad timezone", with(`"UTC"`, `"Mars/Olympus"`), "timezone", "time zone"},
		{"text too long", with(`"hi"`, `"`+strings.Repeat("x", 4001)+`"`), "text", "too long"},
		{"empty", ``, "", "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got UserTurn
			err := Decode([]byte(tt.give), &got)
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Decode() error = %v, want a *ValidationError", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) = false")
			}
			if verr.Field != tt.wantField {
				t.Errorf("field = %q, want %q (error %q)", verr.Field, tt.wantField, err)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error %q does not contain %q", err, tt.wantIn)
			}
		})
	}
}

func TestDecodeClientFrame(t *testing.T) {
	tests := []struct {
		name      string
		give      string
		wantKind  string
		wantField string
	}{
		{"message", `{"type":"message","id":"m1","conversation_id":"c1","text":"hi"}`, "message", ""},
		{"confirm", `{"type":"confirm","proposal_id":"p1","decision":"reject"}`, "confirm", ""},
		{"resume", `{"type":"resume","after_seq":3}`, "resume", ""},
		{"ping", `{"type":"ping"}`, "ping", ""},
		{"no type", `{"id":"m1"}`, "", "type"},
		{"unknown type", `{"type":"exec"}`, "", "type"},
		{"confirm naming a tool", `{"type":"confirm","proposal_id":"p1","decision":"approve","tool":"delete_expense"}`, "", "tool"},
		{"approve all", `{"type":"confirm","id":"m9","conversation_id":"c1","decision":"approve_all","proposal_ids":["p1","p2"]}`, "confirm", ""},
		{"approve all with one id", `{"type":"confirm","decision":"approve_all","proposal_ids":["p1"]}`, "", "proposal_ids"},
		{"approve all naming a tool", `{"type":"confirm","decision":"approve_all","proposal_ids":["p1","p2"],"tool":"delete_expense"}`, "", "tool"},
		{"message with locale", `{"type":"message","id":"m1","conversation_id":"c1","text":"salut","locale":"fr-FR"}`, "message", ""},
		{"message with a bad locale", `{"type":"message","id":"m1","conversation_id":"c1","text":"hi","locale":"fr FR"}`, "", "locale"},
		{"negative resume", `{"type":"resume","after_seq":-1}`, "", "after_seq"},
		{"conversation with dot", `{"type":"message","id":"m1","conversation_id":"a.b","text":"hi"}`, "", "conversation_id"},
		{"id with star", `{"type":"message","id":"*","conversation_id":"c1","text":"hi"}`, "", "id"},
		{"bad json", `{"type":"message",`, "", ""},
		{"NUL in text", `{"type":"message","id":"m1","conversation_id":"c1","text":"add £4 ab\u0000cd today"}`, "", "text"},
		{"invalid UTF-8", "{\"type\":\"message\",\"id\":\"m1\",\"conversation_id\":\"c1\",\"text\":\"caf\xe9\"}", "", ""},
		{"only a bidi override", `{"type":"message","id":"m1","conversation_id":"c1","text":"\u202e"}`, "", "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := DecodeClientFrame([]byte(tt.give))
			kind := ""
			switch {
			case err != nil:
			case f.Message != nil:
				kind = "message"
			case f.Confirm != nil:
				kind = "confirm"
			case f.Resume != nil:
				kind = "resume"
			case f.Ping != nil:
				kind = "ping"
			}
			if kind != tt.wantKind {
				t.Fatalf("kind = %q (err %v), want %q", kind, err, tt.wantKind)
			}
			if tt.wantKind != "" {
				return
			}
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("error = %v, want *ValidationError", err)
			}
			if verr.Field != tt.wantField {
				t.Errorf("field = %q, want %q (%v)", verr.Field, tt.wantField, err)
			}
		})
	}
}

func TestToolArgs(t *testing.T) {
	tests := []struct {
		tool      string
		give      string
		wantErr   string // substring; "" means valid
		wantCanon string
	}{
		{ToolAddExpense, `{"item":"lunch","amount":"12.5"}`, "", `{"item":"lunch","amount":"12.5"}`},
		{ToolAddExpense, `{"amount":"12.50","item":"lunch","currency":null,"date":"2026-11-03"}`, "", `{"item":"lunch","amount":"12.50","date":"2026-11-03"}`},
		{ToolAddExpense, `{"item":"lunch"}`, "amount: is required", ""},
		{ToolAddExpense, `{"item":"lunch","amount":12.5}`, "", `{"item":"lunch","amount":"12.5"}`},
		{ToolAddExpense, `{"item":"electricity bill","amount":200}`, "", `{"item":"electricity bill","amount":"200"}`},
		{ToolAddExpense, `{"item":"lunch","amount":true}`, "amount: must be a number or a string", ""},
		{ToolAddExpense, `{"item":"lunch","amount":"-3"}`, "amount: must be more than zero", ""},
		{ToolAddExpense, `{"item":"lunch","amount":-3}`, "amount: must be more than zero", ""},
		{ToolAddExpense, `{"item":"lunch","amount":"0.00"}`, "amount: must be more than zero", ""},
		{ToolAddExpense, `{"item":"lunch","amount":1e308}`, "amount: must be written out in digits, without an exponent", ""},
		{ToolAddExpense, `{"item":"lunch","amount":"12,50"}`, "amount: is ambiguous", ""},
		{ToolAddExpense, `{"item":"lunch","amount":"3","currency":"XXX"}`, "currency: must be an ISO 4217", ""},
		{ToolAddExpense, `{"item":"lunch","amount":"3","currency":"ABC"}`, "currency: must be an ISO 4217", ""},
		{ToolAddExpense, `{"item":"ramen","amount":1200,"currency":"JPY"}`, "", `{"item":"ramen","amount":"1200","currency":"JPY"}`},
		{ToolAddExpense, `{"item":"ramen","amount":"1200.5","currency":"JPY"}`, "amount: must be a whole number: JPY has no minor unit", ""},
		{ToolAddExpense, `{"item":"fuel","amount":"12.345","currency":"KWD"}`, "", `{"item":"fuel","amount":"12.345","currency":"KWD"}`},
		{ToolAddExpense, `{"item":"fuel","amount":"12.345","currency":"GBP"}`, "amount: has more decimals than GBP allows (2)", ""},
		{ToolUpdateExpense, `{"id":3,"amount":15}`, "", `{"id":3,"amount":"15"}`},
		{ToolUpdateExpense, `{"id":3,"amount":"15e0"}`, "amount: must be written out in digits", ""},
		{ToolAddExpense, `{"item":"lunch","amount":"3","tenant_id":"other"}`, "tenant_id: unknown field", ""},
		{ToolAddExpense, `{"item":"lunch","amount":"3","currency":"pounds"}`, "currency: must be an ISO 4217", ""},
		{ToolAddExpense, `{"item":"lunch","amount":"3","date":"2026-02-30"}`, "date: must be a date", ""},
		{ToolDeleteExpense, `{"id":0}`, "id: is required", ""},
		{ToolDeleteExpense, `{"id":"3"}`, "id: must be an integer", ""},
		{ToolListExpenses, `{}`, "", `{}`},
		{ToolListExpenses, `{"range":"last_30_days"}`, "", `{"range":"last_30_days"}`},
		{ToolListExpenses, `{"range":"2026-02"}`, "", `{"range":"2026-02"}`},
		{ToolListExpenses, `{"range":"2026-11-01..2026-11-30"}`, "", `{"range":"2026-11-01..2026-11-30"}`},
		{ToolListExpenses, `{"range":"2026-11-30..2026-11-01"}`, "range: must be a range", ""},
		{ToolListExpenses, `{"range":"2026-Q1"}`, "", `{"range":"2026-Q1"}`},
		{ToolListExpenses, `{"range":"2025"}`, "", `{"range":"2025"}`},
		{ToolGetBalance, `{"range":"since_2026-03-01"}`, "", `{"range":"since_2026-03-01"}`},
		{ToolGetBalance, `{"range":"all_time"}`, "", `{"range":"all_time"}`},
		{ToolGetBalance, `{"range":"last_year"}`, "", `{"range":"last_year"}`},
		{ToolGetBalance, `{"range":"2026-Q5"}`, "range: must be a range", ""},
		{ToolGetBalance, `{"range":"since_2026-02-30"}`, "range: must be a range", ""},
		{ToolListExpenses, `{"range":"last_0_days"}`, "range: must be a range", ""},
		{ToolListExpenses, `{"range":"2026-13"}`, "range: must be a range", ""},
		{ToolGetTransactions, `{"review_status":"needs_review"}`, "", `{"review_status":"needs_review"}`},
		{ToolGetTransactions, `{"review_status":"maybe"}`, "review_status: must be one of", ""},
		{ToolFetchEmailAttachments, `{"message_id":"../etc/passwd"}`, "message_id: must be 1-64", ""},
		{ToolSearchGmail, `{"query":"visa statement","limit":51}`, "limit: must be at most 50", ""},
		{ToolSummarizeSpending, `{"by":"merchant","range":"2026-03","limit":5}`, "", `{"by":"merchant","range":"2026-03","limit":5}`},
		{ToolSummarizeSpending, `{"by":"account"}`, "by: must be one of", ""},
		{ToolSummarizeSpending, `{"by":"month","limit":0}`, "limit: must be at least 1", ""},
		{ToolSummarizeSpending, `{"group":"month"}`, "group: unknown field", ""},
		{ToolBiggestExpenses, `{"range":"2025","limit":51}`, "limit: must be at most 50", ""},
		{ToolBiggestExpenses, `{"range":"last_month","limit":5}`, "", `{"range":"last_month","limit":5}`},
		{ToolRecurringPayments, `{}`, "", `{}`},
		{ToolRecurringPayments, `{"range":"2026-13"}`, "range: must be a range", ""},
		{ToolUpdateTransaction, `{"id":12,"review":"clear"}`, "", `{"id":12,"review":"clear"}`},
		{ToolUpdateTransaction, `{"id":12,"review":"flag"}`, "review: must be one of", ""},
		{ToolUpdateTransaction, `{"id":0,"category":"rent"}`, "id: is required", ""},
		{ToolUpdateTransaction, `{"id":12,"category":""}`, "category:", ""},
		{ToolGetLastChange, `{"scope":"import"}`, "", `{"scope":"import"}`},
		{ToolGetLastChange, `{"scope":"expense"}`, "scope: must be one of", ""},
		{ToolUndoChange, `{"change_id":7}`, "", `{"change_id":7}`},
		{ToolUndoChange, `{}`, "change_id: is required", ""},
		{ToolUndoChange, `{"change_id":7,"user_id":"other"}`, "user_id: unknown field", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.give, func(t *testing.T) {
			spec, ok := LookupTool(tt.tool)
			if !ok {
				t.Fatalf("tool %s not in catalog", tt.tool)
			}
			got, err := spec.CanonicalArgs(json.RawMessage(tt.give))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CanonicalArgs() error = %v", err)
				}
				if string(got) != tt.wantCanon {
					t.Errorf("canonical = %s, want %s", got, tt.wantCanon)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CanonicalArgs() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestSchemasAreStrict(t *testing.T) {
	specs := append(Tools(), clarifySpec)
	for _, spec := range specs {
		t.Run(spec.Name, func(t *testing.T) {
			raw := spec.Schema()
			var s struct {
				Type                 string                     `json:"type"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
				Required             []string                   `json:"required"`
				Properties           map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Errorf("schema is not a closed object: %s", raw)
			}
			if len(s.Required) != len(s.Properties) || len(s.Properties) == 0 {
				t.Errorf("required %v does not list all %d properties", s.Required, len(s.Properties))
			}
			// Every property of the Go struct is in the schema, and described.
			fields := map[string]bool{}
			for name := range s.Properties {
				fields[name] = true
				var p struct {
					Description string `json:"description"`
				}
				_ = json.Unmarshal(s.Properties[name], &p)
				if p.Description == "" {
					t.Errorf("property %s has no description", name)
				}
			}
			path := filepath.Join("testdata", "schema", spec.Name+".json")
			var pretty bytes.Buffer
			_ = json.Indent(&pretty, raw, "", "  ")
			pretty.WriteByte('\n')
			if *update {
				_ = os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run with -update): %v", err)
			}
			if diff := cmp.Diff(string(want), pretty.String()); diff != "" {
				t.Errorf("schema changed (-golden +got):\n%s", diff)
			}
		})
	}
}

func TestValidID(t *testing.T) {
	for give, want := range map[string]bool{"abc_DEF-123": true, "a.b": false, "*": false, ">": false, "": false, "a b": false, strings.Repeat("a", 64): true, strings.Repeat("a", 65): false, "é": false} {
		if got := ValidID(give); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", give, got, want)
		}
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct {
		give, want, wantErr string
	}{
		{give: "add £4 coffee today", want: "add £4 coffee today"},
		{give: "two\nlines\tand a tab\r\n", want: "two\nlines\tand a tab\r\n"},
		{give: "pay \u202egnp.exe\u202c now", want: "pay gnp.exe now"},
		{give: "isolate \u2066x\u2069 and bell\a and esc\x1b[31m and C1\u0085", want: "isolate x and bell and esc[31m and C1"},
		{give: "ab\x00cd", wantErr: "text: must not contain a NUL character"},
		{give: "caf\xe9", wantErr: "text: is not valid UTF-8 text"},
	}
	for _, tt := range tests {
		got, err := CleanText("text", tt.give)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrInvalid) {
				t.Errorf("CleanText(%q) error = %v, want %q", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CleanText(%q) = %q, %v; want %q", tt.give, got, err, tt.want)
		}
		if !SafeText(got) {
			t.Errorf("SafeText(%q) = false after cleaning", got)
		}
	}
}

// Text that the ingress would have cleaned is refused on the bus and in
// tool arguments: a publisher that skips the ingress, or a model, cannot
// store a NUL or an override character.
func TestUnsafeTextRefusedInMessagesAndArgs(t *testing.T) {
	turn := `{"turn_id":"t1","tenant_id":"acme","user_id":"ann","roles":["member"],"conversation_id":"c1","text":"ab\u0000cd","timezone":"UTC","sent_at":"2026-11-23T10:00:00Z"}`
	var ut UserTurn
	if err := Decode([]byte(turn), &ut); err == nil || !strings.HasPrefix(err.Error(), "text:") {
		t.Errorf("turn with NUL: %v", err)
	}
	spec, _ := LookupTool(ToolAddExpense)
	for _, args := range []string{`{"item":"tea\u0000","amount":"4"}`, `{"item":"tea\u202e","amount":"4"}`, "{\"item\":\"t\xffea\",\"amount\":\"4\"}"} {
		if _, err := spec.DecodeArgs([]byte(args)); err == nil {
			t.Errorf("args %q accepted", args)
		}
	}
	if _, err := spec.DecodeArgs([]byte(`{"item":"tea","amount":"4"}`)); err != nil {
		t.Errorf("clean args refused: %v", err)
	}
}

// What an ingress of the single InboxRequest type sent for each op still
// decodes into that op's request, so a rolling deploy keeps answering.
func TestInboxRequestBodiesOfOldIngressesDecode(t *testing.T) {
	tests := []struct {
		name string
		give string
		into any
	}{
		{"resume", `{"after_seq":41,"limit":200}`, new(ResumeRequest)},
		{"notifications", `{"limit":50,"unread":true}`, new(NotificationsRequest)},
		{"read", `{"id":"n1"}`, new(MarkReadRequest)},
		{"turn", `{"turn_id":"t1"}`, new(TurnFramesRequest)},
		{"audit", `{"limit":50}`, new(AuditRequest)},
		{"match", `{"conversation_id":"c1","tool":"delete_expense","args":{"id":3}}`, new(MatchRequest)},
		{"user_message", `{"id":"m1","turn_id":"t1","conversation_id":"c1","text":"hi"}`, new(UserMessageRequest)},
		{"conversations", `{"limit":50}`, new(ConversationsRequest)},
		{"history", `{"limit":50,"conversation_id":"c1","before_seq":43}`, new(HistoryRequest)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Decode([]byte(tt.give), tt.into); err != nil {
				t.Errorf("Decode(%s) = %v, want nil", tt.give, err)
			}
		})
	}
}

// An audit request names one of two scopes, or none (the user's own
// calls); anything else is refused.
func TestAuditRequestScope(t *testing.T) {
	tests := []struct {
		give    string
		wantErr bool
	}{
		{`{"limit":50}`, false},
		{`{"limit":50,"scope":"own"}`, false},
		{`{"limit":50,"scope":"tenant"}`, false},
		{`{"limit":50,"scope":"all"}`, true},
		{`{"limit":50,"scope":"Tenant"}`, true},
	}
	for _, tt := range tests {
		err := Decode([]byte(tt.give), new(AuditRequest))
		if got := err != nil; got != tt.wantErr {
			t.Errorf("Decode(%s) = %v, want error %v", tt.give, err, tt.wantErr)
		}
	}
}
