package toolrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Categories and rules. Every entry has a category: one the person gave,
// else the one their first matching rule gives (store.SortRules: longest
// pattern first, then the oldest rule), else what the statement said,
// else "other".

// categoryName is how a category is kept: lower case, single spaces.
func categoryName(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// categorize is the category of a new entry of call c described by texts
// (its description, its merchant): given when the person gave one, else
// the category of the user's first matching rule, else "other". It reads
// the rules in tx, the transaction the entry is written in, and a rule
// applied is written there in the audit log, under the call's id.
func categorize(ctx context.Context, tx Tx, c Call, given string, texts ...string) (string, error) {
	if name := categoryName(given); name != "" {
		return name, nil
	}
	r, ok, err := tx.Categorize(ctx, c.Caller.TenantID, c.Caller.UserID, texts...)
	if err != nil {
		return "", err
	}
	if !ok {
		return store.CategoryOther, nil
	}
	args, _ := json.Marshal(ruleApplied{RuleID: r.ID, Pattern: r.Pattern, Category: r.Category, Entries: 1})
	err = tx.AppendAudit(ctx, store.AuditEntry{ID: c.ID + ".rule", TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, Tool: auditApplyRule,
		CallID: c.ID, Outcome: "ok", Args: args, CreatedAt: c.Now})
	return r.Category, err
}

// auditApplyRule names, in the audit log, the rules applied to entries a
// call or an import wrote.
const auditApplyRule = "apply_rule"

// ruleApplied is what the audit log keeps of a rule applied: the rule and
// how many entries it filed.
type ruleApplied struct {
	RuleID   int64  `json:"rule_id"`
	Pattern  string `json:"pattern"`
	Category string `json:"category"`
	Entries  int    `json:"entries"`
}

// categorizeLines files each imported line under the category of the
// user's first matching rule; a line no rule matches keeps the category
// the statement gave it, or gets "other". The rules are read once, in tx,
// the transaction the lines are inserted in.
func categorizeLines(ctx context.Context, tx *store.Store, lines []store.Transaction) error {
	if len(lines) == 0 {
		return nil
	}
	rules, err := tx.ListRules(ctx, lines[0].TenantID, lines[0].UserID)
	if err != nil {
		return err
	}
	var applied []ruleApplied
	for i := range lines {
		l := &lines[i]
		if r, ok := store.MatchRule(rules, l.Vendor, l.Description); ok {
			l.Category = r.Category
			j := slices.IndexFunc(applied, func(a ruleApplied) bool { return a.RuleID == r.ID })
			if j < 0 {
				applied = append(applied, ruleApplied{RuleID: r.ID, Pattern: r.Pattern, Category: r.Category})
				j = len(applied) - 1
			}
			applied[j].Entries++
			continue
		}
		if l.Category = categoryName(l.Category); l.Category == "" {
			l.Category = store.CategoryOther
		}
	}
	if len(applied) == 0 {
		return nil
	}
	// Lines already imported are skipped by the insert, so Entries counts
	// the lines of the file each rule filed.
	l := lines[0]
	args, _ := json.Marshal(struct {
		DocumentID string        `json:"document_id"`
		Rules      []ruleApplied `json:"rules"`
	}{l.DocumentID, applied})
	return tx.AppendAudit(ctx, store.AuditEntry{ID: "import-rules-" + l.DocumentID, TenantID: l.TenantID, UserID: l.UserID, Tool: auditApplyRule,
		CallID: l.DocumentID, Outcome: "ok", Args: args, CreatedAt: l.CreatedAt})
}

func ruleView(r store.Rule) contracts.RuleView {
	return contracts.RuleView{ID: r.ID, Pattern: r.Pattern, Category: r.Category}
}

// needCategory refuses a category the user does not have, naming how to
// get it.
func needCategory(ctx context.Context, tx Tx, c Call, name string) error {
	ok, err := tx.HasCategory(ctx, c.Caller.TenantID, c.Caller.UserID, name)
	if err != nil {
		return err
	}
	if !ok {
		return fail(contracts.CodeInvalidArgs, fmt.Sprintf("'%s' is not one of your categories: add it first, or pick one you have.", contracts.PlainText(name)))
	}
	return nil
}

// patternOf is a pattern as rules keep it, refused when nothing is left.
func patternOf(p string) (string, error) {
	p = store.FoldText(strings.Join(strings.Fields(p), " "))
	if len([]rune(p)) < 2 {
		return "", fail(contracts.CodeInvalidArgs, "pattern: give at least two letters of the merchant or description")
	}
	return p, nil
}

// optionalRange resolves an optional range; none gives every date.
func optionalRange(r *string, c Call) (name, from, to string, err error) {
	if r == nil {
		return "", "", "", nil
	}
	return rangeOrDefault(r, c)
}

func listCategories(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.ListCategoriesArgs)
	cats, err := tx.ListCategories(ctx, c.Caller.TenantID, c.Caller.UserID)
	if err != nil {
		return Output{}, err
	}
	out := contracts.CategoryList{Categories: []contracts.CategoryView{}}
	for _, k := range cats {
		if a.OwnOnly != nil && *a.OwnOnly && !k.Own {
			continue
		}
		out.Categories = append(out.Categories, contracts.CategoryView{Name: k.Name, Own: k.Own})
	}
	n := int64(len(out.Categories))
	return Output{Data: out, Total: &n}, nil
}

func addCategory(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.AddCategoryArgs)
	name := categoryName(a.Name)
	if len([]rune(name)) < 2 {
		return Output{}, fail(contracts.CodeInvalidArgs, "name: give a name of at least two letters")
	}
	added, err := tx.AddCategory(ctx, c.Caller.TenantID, c.Caller.UserID, name, c.Now)
	if errors.Is(err, store.ErrLimit) {
		return Output{}, fail(contracts.CodeLimit, fmt.Sprintf("You have %d categories of your own already, the most one person may add.", store.MaxOwnCategories))
	} else if err != nil {
		return Output{}, err
	}
	return Output{Data: contracts.CategoryAdded{Name: name, Added: added}}, nil
}

func listRules(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.ListRulesArgs)
	rules, err := tx.ListRules(ctx, c.Caller.TenantID, c.Caller.UserID)
	if err != nil {
		return Output{}, err
	}
	out := contracts.RuleList{Rules: []contracts.RuleView{}}
	for _, r := range rules {
		if a.Category != nil && r.Category != categoryName(*a.Category) {
			continue
		}
		out.Rules = append(out.Rules, ruleView(r))
	}
	n := int64(len(out.Rules))
	return Output{Data: out, Total: &n}, nil
}

func setRule(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.SetRuleArgs)
	pattern, err := patternOf(a.Pattern)
	if err != nil {
		return Output{}, err
	}
	category := categoryName(a.Category)
	if err := needCategory(ctx, tx, c, category); err != nil {
		return Output{}, err
	}
	var before string
	if cur, err := tx.GetRule(ctx, c.Caller.TenantID, c.Caller.UserID, pattern); err == nil {
		before = cur.Category
	} else if !errors.Is(err, store.ErrNotFound) {
		return Output{}, err
	}
	r, created, err := tx.PutRule(ctx, store.Rule{TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, Pattern: pattern, Category: category, UpdatedAt: c.Now})
	if errors.Is(err, store.ErrLimit) {
		return Output{}, fail(contracts.CodeLimit, fmt.Sprintf("You have %d rules already, the most one person may keep: delete one first.", store.MaxRules))
	} else if err != nil {
		return Output{}, err
	}
	return Output{Data: contracts.RuleSet{Rule: ruleView(r), Created: created, Before: before}}, nil
}

func deleteRule(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.DeleteRuleArgs)
	pattern, err := patternOf(a.Pattern)
	if err != nil {
		return Output{}, err
	}
	r, err := tx.DeleteRule(ctx, c.Caller.TenantID, c.Caller.UserID, pattern)
	if errors.Is(err, store.ErrNotFound) {
		return Output{}, fail(contracts.CodeNotFound, fmt.Sprintf("You have no rule for '%s'.", contracts.PlainText(pattern)))
	} else if err != nil {
		return Output{}, err
	}
	return Output{Data: contracts.RuleDeleted{Rule: ruleView(r)}}, nil
}

// matchShown is how many matching entries a match shows.
const matchShown = 5

func matchEntries(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.MatchEntriesArgs)
	pattern, err := patternOf(a.Pattern)
	if err != nil {
		return Output{}, err
	}
	name, from, to, err := optionalRange(a.Range, c)
	if err != nil {
		return Output{}, err
	}
	n, first, err := tx.MatchEntries(ctx, store.PatternFilter{TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, Pattern: pattern, From: from, To: to}, matchShown)
	if err != nil {
		return Output{}, err
	}
	out := contracts.EntryMatches{Pattern: pattern, Range: name, From: from, To: to, Count: n, Entries: []contracts.EntryView{}}
	for _, e := range first {
		out.Entries = append(out.Entries, contracts.EntryView{Kind: e.Kind, ID: e.ID, Date: e.Date, Description: e.Description, Merchant: e.Merchant,
			Amount: contracts.Money{Minor: e.AmountMinor, Currency: e.Currency}, Category: e.Category})
	}
	if r, err := tx.GetRule(ctx, c.Caller.TenantID, c.Caller.UserID, pattern); err == nil {
		v := ruleView(r)
		out.Rule = &v
	} else if !errors.Is(err, store.ErrNotFound) {
		return Output{}, err
	}
	total := int64(n)
	return Output{Data: out, Total: &total}, nil
}

func recategorize(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.RecategorizeArgs)
	pattern, err := patternOf(a.Pattern)
	if err != nil {
		return Output{}, err
	}
	category := categoryName(a.Category)
	if err := needCategory(ctx, tx, c, category); err != nil {
		return Output{}, err
	}
	name, from, to, err := optionalRange(a.Range, c)
	if err != nil {
		return Output{}, err
	}
	f := store.PatternFilter{TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, Pattern: pattern, From: from, To: to}
	if n, _, err := tx.MatchEntries(ctx, f, 1); err != nil {
		return Output{}, err
	} else if n == 0 {
		return Output{}, fail(contracts.CodeNotFound, fmt.Sprintf("None of your entries match '%s'.", contracts.PlainText(pattern)))
	}
	n, err := tx.Recategorize(ctx, f, category, c.Now)
	if err != nil {
		return Output{}, err
	}
	return Output{Data: contracts.Recategorized{Pattern: pattern, Category: category, Range: name, From: from, To: to, Changed: n}}, nil
}
