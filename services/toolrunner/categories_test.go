package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// run sends one call of ann's (a change approved first) and returns its
// result.
func run(t *testing.T, s *systest.System, callID, tool, args string) contracts.ToolResult {
	t.Helper()
	req := request("acme", "ann", callID, tool, args)
	if spec, _ := contracts.LookupTool(tool); spec.Kind == contracts.KindMutation {
		approved(t, s, &req, "p-"+callID)
	}
	req.Deadline = time.Now().Add(time.Hour)
	s.SendToolRequest(req)
	return s.Result("acme", "conv-ann", callID)
}

func decodeData[T any](t *testing.T, res contracts.ToolResult) T {
	t.Helper()
	var v T
	if !res.OK {
		t.Fatalf("call failed: %+v", res.Error)
	}
	if err := json.Unmarshal(res.Data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Rules file what is added by hand (when the person names no category)
// and what is imported, in the write's own transaction; what no rule
// files is "other".
func TestRulesApplyAtAddAndImport(t *testing.T) {
	statement := "2026-10-01,-1299,TESCO STORES\n2026-10-02,-450,COSTA COFFEE\n2026-10-03,-5000,Unity Technologies\n"
	mb := mailbox{msgs: map[string]toolrunner.Fetched{
		"m-visa": {Subject: "Your Visa statement", Files: []toolrunner.File{{Name: "october.csv", MediaType: "text/csv", Data: []byte(statement)}}},
	}}
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			s := systest.Start(t, systest.Options{DSN: e.DSN(t), Now: clock, Toolrunners: 1, Mail: mb, Parser: simpleCSV{}})
			ctx := context.Background()
			for _, r := range [][2]string{{"tesco", "groceries"}, {"unity", "software"}} {
				if _, _, err := s.Store.PutRule(ctx, store.Rule{TenantID: "acme", UserID: "ann", Pattern: r[0], Category: r[1]}); err != nil {
					t.Fatal(err)
				}
			}
			for i, c := range []struct{ args, want string }{
				{`{"item":"Unity Pro seat","amount":"40.00"}`, "software"},
				{`{"item":"lunch","amount":"9.00"}`, "other"},
				{`{"item":"Tesco meal deal","amount":"4.00","category":"Dining"}`, "dining"},
			} {
				out := decodeData[contracts.ExpenseChanged](t, run(t, s, fmt.Sprintf("add%d", i), contracts.ToolAddExpense, c.args))
				if out.Expense.Category != c.want {
					t.Errorf("%s added under %q, want %q", c.args, out.Expense.Category, c.want)
				}
			}
			notes := s.Watch("purser.notify.acme.ann")
			run(t, s, "fetch1", contracts.ToolFetchEmailAttachments, `{"message_id":"m-visa"}`)
			notes.WaitN(1, nil)
			txs, err := s.Store.ListTransactions(ctx, store.TransactionFilter{TenantID: "acme", UserID: "ann"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tx := range txs {
				got = append(got, tx.Description+"="+tx.Category)
			}
			if want := []string{"TESCO STORES=groceries", "COSTA COFFEE=other", "Unity Technologies=software"}; !slices.Equal(got, want) {
				t.Fatalf("imported %q, want %q", got, want)
			}
			// Each rule applied is in the audit log, under the call or
			// the document whose entries it filed.
			entries, err := s.Store.ListAudit(ctx, "acme", 100)
			if err != nil {
				t.Fatal(err)
			}
			applied := map[string]string{}
			for _, a := range entries {
				if a.Tool == "apply_rule" {
					applied[a.CallID] = string(a.Args)
				}
			}
			if len(applied) != 2 || applied["add0"] != `{"rule_id":2,"pattern":"unity","category":"software","entries":1}` {
				t.Errorf("rules applied at add in the audit log: %v", applied)
			}
			for call, args := range applied {
				if call != "add0" && (!strings.Contains(args, `"pattern":"tesco","category":"groceries","entries":1`) || !strings.Contains(args, `"pattern":"unity","category":"software","entries":1`)) {
					t.Errorf("rules applied at import in the audit log: %s %s", call, args)
				}
			}
		})
	}
}

func TestCategoryAndRuleTools(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		for _, e := range []store.Expense{
			{Item: "Unity Pro seat", Date: "2026-11-03"}, {Item: "UNITY assets", Date: "2026-10-03"}, {Item: "Ünity plugin", Date: "2026-11-04"}, {Item: "coffee", Date: "2026-11-04"},
		} {
			e.TenantID, e.UserID, e.AmountMinor, e.Currency, e.Category = "acme", "ann", 1000, "GBP", "other"
			if _, err := s.Store.AddExpense(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "bob", Item: "Unity", AmountMinor: 5, Currency: "GBP", Date: "2026-11-03", Category: "other"}); err != nil {
			t.Fatal(err)
		}

		cats := decodeData[contracts.CategoryList](t, run(t, s, "lc1", contracts.ToolListCategories, `{}`))
		if len(cats.Categories) != len(store.DefaultCategories) || !slices.Contains(cats.Categories, contracts.CategoryView{Name: "software"}) {
			t.Fatalf("a new person's categories = %+v, want the defaults", cats.Categories)
		}
		if a := decodeData[contracts.CategoryAdded](t, run(t, s, "ac1", contracts.ToolAddCategory, `{"name":"  Pets "}`)); !a.Added || a.Name != "pets" {
			t.Fatalf("add pets = %+v", a)
		}
		if a := decodeData[contracts.CategoryAdded](t, run(t, s, "ac2", contracts.ToolAddCategory, `{"name":"PETS"}`)); a.Added {
			t.Fatal("pets added twice")
		}
		own := decodeData[contracts.CategoryList](t, run(t, s, "lc2", contracts.ToolListCategories, `{"own_only":true}`))
		if !slices.Equal(own.Categories, []contracts.CategoryView{{Name: "pets", Own: true}}) {
			t.Fatalf("own categories = %+v", own.Categories)
		}

		set := decodeData[contracts.RuleSet](t, run(t, s, "sr1", contracts.ToolSetRule, `{"pattern":"Spotify","category":"subscriptions"}`))
		if !set.Created || set.Rule.Pattern != "spotify" || set.Rule.Category != "subscriptions" {
			t.Fatalf("new rule = %+v", set)
		}
		changed := decodeData[contracts.RuleSet](t, run(t, s, "sr2", contracts.ToolSetRule, `{"pattern":"SPOTIFY","category":"entertainment"}`))
		if changed.Created || changed.Rule.ID != set.Rule.ID || changed.Before != "subscriptions" || changed.Rule.Category != "entertainment" {
			t.Fatalf("changed rule = %+v", changed)
		}
		if res := run(t, s, "sr3", contracts.ToolSetRule, `{"pattern":"boat shop","category":"boats"}`); res.OK || res.Error.Code != contracts.CodeInvalidArgs {
			t.Fatalf("rule into a category ann does not have = %+v", res)
		}
		rules := decodeData[contracts.RuleList](t, run(t, s, "lr1", contracts.ToolListRules, `{}`))
		if !slices.Equal(rules.Rules, []contracts.RuleView{{ID: set.Rule.ID, Pattern: "spotify", Category: "entertainment"}}) {
			t.Fatalf("rules = %+v", rules.Rules)
		}
		if res := run(t, s, "dr1", contracts.ToolDeleteRule, `{"pattern":"netflix"}`); res.OK || res.Error.Code != contracts.CodeNotFound {
			t.Fatalf("deleting a rule ann does not have = %+v", res)
		}
		if d := decodeData[contracts.RuleDeleted](t, run(t, s, "dr2", contracts.ToolDeleteRule, `{"pattern":"Spotify"}`)); d.Rule.Category != "entertainment" {
			t.Fatalf("deleted = %+v", d)
		}
		if rules := decodeData[contracts.RuleList](t, run(t, s, "lr2", contracts.ToolListRules, `{}`)); len(rules.Rules) != 0 {
			t.Fatalf("rules after the delete = %+v", rules.Rules)
		}

		m := decodeData[contracts.EntryMatches](t, run(t, s, "me1", contracts.ToolMatchEntries, `{"pattern":"unity","range":"2026-11"}`))
		if m.Count != 2 || len(m.Entries) != 2 || m.Entries[0].Description != "Ünity plugin" || m.Entries[0].Amount != (contracts.Money{Minor: -1000, Currency: "GBP"}) || m.Rule != nil {
			t.Fatalf("unity in November = %+v", m)
		}
		r := decodeData[contracts.Recategorized](t, run(t, s, "rc1", contracts.ToolRecategorize, `{"pattern":"unity","category":"Software","range":"2026-11"}`))
		if r.Changed != 2 || r.Category != "software" {
			t.Fatalf("recategorize = %+v", r)
		}
		var got []string
		for _, e := range rows(t, s, "acme") {
			got = append(got, e.UserID+":"+e.Item+"="+e.Category)
		}
		slices.Sort(got)
		want := []string{"ann:UNITY assets=other", "ann:Unity Pro seat=software", "ann:coffee=other", "ann:Ünity plugin=software", "bob:Unity=other"}
		if !slices.Equal(got, want) {
			t.Fatalf("after the recategorize: %q, want %q", got, want)
		}
	})
}

// A viewer reads categories and rules but changes none of them; an owner
// or a member changes their own.
func TestViewerCannotChangeCategoriesOrRules(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		if _, _, err := s.Store.PutRule(ctx, store.Rule{TenantID: "acme", UserID: "ann", Pattern: "spotify", Category: "subscriptions"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: "Unity", AmountMinor: 5, Currency: "GBP", Date: "2026-11-03", Category: "other"}); err != nil {
			t.Fatal(err)
		}
		calls := []struct{ tool, args string }{
			{contracts.ToolAddCategory, `{"name":"pets"}`},
			{contracts.ToolSetRule, `{"pattern":"netflix","category":"entertainment"}`},
			{contracts.ToolSetRule, `{"pattern":"spotify","category":"entertainment"}`},
			{contracts.ToolDeleteRule, `{"pattern":"spotify"}`},
			{contracts.ToolRecategorize, `{"pattern":"unity","category":"software"}`},
			{contracts.ToolListCategories, `{}`},
			{contracts.ToolListRules, `{}`},
		}
		for _, role := range []string{contracts.RoleViewer, contracts.RoleMember} {
			for i, c := range calls {
				callID := fmt.Sprintf("%s-%d", role, i)
				req := request("acme", "ann", callID, c.tool, c.args, role)
				spec, _ := contracts.LookupTool(c.tool)
				if spec.Kind == contracts.KindMutation {
					approved(t, s, &req, "p-"+callID)
				}
				s.SendToolRequest(req)
				res := s.Result("acme", "conv-ann", callID)
				refused := !res.OK && res.Error.Code == contracts.CodeForbidden
				if want := role == contracts.RoleViewer && spec.Kind == contracts.KindMutation; refused != want || !refused && !res.OK {
					t.Errorf("%s %s by %s = %+v, want refused %v", c.tool, c.args, role, res.Error, want)
				}
			}
			cats, _ := s.Store.ListCategories(ctx, "acme", "ann")
			rules, _ := s.Store.ListRules(ctx, "acme", "ann")
			e, _ := s.Store.GetExpense(ctx, "acme", "ann", 1)
			state := fmt.Sprintf("%d categories, %d rules, unity=%s", len(cats), len(rules), e.Category)
			want := map[string]string{
				contracts.RoleViewer: fmt.Sprintf("%d categories, 1 rules, unity=other", len(store.DefaultCategories)),
				contracts.RoleMember: fmt.Sprintf("%d categories, 1 rules, unity=software", len(store.DefaultCategories)+1),
			}[role]
			if state != want {
				t.Errorf("after the %s's calls: %s, want %s", role, state, want)
			}
		}
	})
}

// A correction in chat, end to end with the offline model: the
// recategorize is proposed showing what it files, its yes files them and
// offers the rule for next time, whose yes makes the rule; the next entry
// added is filed by it.
func TestCorrectionOffersTheRuleForNextTime(t *testing.T) {
	eachEngine(t, systest.Options{Orchestrators: 1}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		for _, item := range []string{"Unity Pro seat", "UNITY assets", "coffee"} {
			if _, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: item, AmountMinor: 4000, Currency: "GBP", Date: "2026-11-03", Category: "other"}); err != nil {
				t.Fatal(err)
			}
		}
		ann := s.User("acme", "ann")
		turn := ann.Say("the Unity ones are software")
		p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, turn)
		if p.Tool != contracts.ToolRecategorize || !strings.HasPrefix(p.Summary, "File 2 entries matching 'unity' under software?") ||
			!strings.Contains(p.Summary, "Unity Pro seat, -£40.00") || strings.Contains(p.Summary, "coffee") {
			t.Fatalf("proposal = %s %q", p.Tool, p.Summary)
		}
		yes := ann.Confirm(p.ProposalID, "approve", nil)
		rule := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, yes)
		if rule.Tool != contracts.ToolSetRule || string(rule.Args) != `{"pattern":"unity","category":"software"}` ||
			!strings.HasPrefix(rule.Summary, "From now on, file entries matching 'unity' under software?") {
			t.Fatalf("follow-up = %s %s %q", rule.Tool, rule.Args, rule.Summary)
		}
		var got []string
		for _, e := range rows(t, s, "acme") {
			got = append(got, e.Item+"="+e.Category)
		}
		slices.Sort(got)
		if want := []string{"UNITY assets=software", "Unity Pro seat=software", "coffee=other"}; !slices.Equal(got, want) {
			t.Fatalf("after the yes: %q, want %q", got, want)
		}
		always := ann.Confirm(rule.ProposalID, "approve", nil)
		if a := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, always); a.Content != "Saved the rule 'unity' → software." {
			t.Fatalf("answer = %q", a.Content)
		}
		if r, err := s.Store.GetRule(ctx, "acme", "ann", "unity"); err != nil || r.Category != "software" {
			t.Fatalf("rule = %+v (%v)", r, err)
		}
		add := ann.Say("add £12 unity plugin")
		pa := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, add)
		done := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Confirm(pa.ProposalID, "approve", nil))
		if !strings.HasSuffix(done.Content, "(software).") {
			t.Fatalf("added = %q, want it filed under software by the rule", done.Content)
		}
	})
}
