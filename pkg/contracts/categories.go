package contracts

// Categories and rules: the tools that list and change a person's
// categories and the rules that file their entries, with their outputs.

// Tool names of categories and rules.
const (
	ToolListCategories = "list_categories"
	ToolAddCategory    = "add_category"
	ToolListRules      = "list_rules"
	ToolSetRule        = "set_rule"
	ToolDeleteRule     = "delete_rule"
	ToolRecategorize   = "recategorize"
	ToolMatchEntries   = "match_entries"
)

// ListCategoriesArgs lists the person's categories.
type ListCategoriesArgs struct {
	OwnOnly *bool `json:"own_only,omitempty" jsonschema_description:"true for only the categories the user added; every category when null."`
}

// AddCategoryArgs adds a category of the person's own.
type AddCategoryArgs struct {
	Name string `json:"name" validate:"required,min=2,max=40,text" jsonschema_description:"The new category's name, e.g. 'pets'; stored in lower case."`
}

// ListRulesArgs lists the person's rules.
type ListRulesArgs struct {
	Category *string `json:"category,omitempty" validate:"omitempty,max=40,text" jsonschema_description:"Only the rules filing entries under this category; every rule when null."`
}

// SetRuleArgs makes a rule, or changes the category of the rule with that
// pattern.
type SetRuleArgs struct {
	Pattern  string `json:"pattern" validate:"required,min=2,max=100,text" jsonschema_description:"Part of the merchant or description the rule looks for, e.g. 'spotify'; case and accents do not matter."`
	Category string `json:"category" validate:"required,min=2,max=40,text" jsonschema_description:"One of the person's categories (list_categories), e.g. 'subscriptions'."`
}

// DeleteRuleArgs deletes the rule with a pattern.
type DeleteRuleArgs struct {
	Pattern string `json:"pattern" validate:"required,min=2,max=100,text" jsonschema_description:"The pattern of the rule to delete, e.g. 'spotify'."`
}

// RecategorizeArgs files the entries whose merchant or description
// contains a pattern under a category.
type RecategorizeArgs struct {
	Pattern  string  `json:"pattern" validate:"required,min=2,max=100,text" jsonschema_description:"Part of the merchant or description of the entries to file, e.g. 'unity'; case and accents do not matter."`
	Category string  `json:"category" validate:"required,min=2,max=40,text" jsonschema_description:"One of the person's categories (list_categories), e.g. 'software'."`
	Range    *string `json:"range,omitempty" validate:"omitempty,daterange" jsonschema_description:"Only entries in this date range, in the same grammar as list_expenses; every entry when null."`
}

// MatchEntriesArgs finds the entries whose merchant or description
// contains a pattern.
type MatchEntriesArgs struct {
	Pattern string  `json:"pattern" validate:"required,min=2,max=100,text" jsonschema_description:"Part of the merchant or description to look for, e.g. 'unity'; case and accents do not matter."`
	Range   *string `json:"range,omitempty" validate:"omitempty,daterange" jsonschema_description:"Only entries in this date range, in the same grammar as list_expenses; every entry when null."`
}

// CategoryView is one category; Own marks one the person added (the rest
// are the defaults everyone starts with).
type CategoryView struct {
	Name string `json:"name"`
	Own  bool   `json:"own,omitempty"`
}

// CategoryList is the output of list_categories.
type CategoryList struct {
	Categories []CategoryView `json:"categories"`
}

// CategoryAdded is the output of add_category; Added is false when the
// person had the category already.
type CategoryAdded struct {
	Name  string `json:"name"`
	Added bool   `json:"added"`
}

// RuleView is one rule: entries whose merchant or description contains
// Pattern (folded: lower case, no accents) are filed under Category.
type RuleView struct {
	ID       int64  `json:"id"`
	Pattern  string `json:"pattern"`
	Category string `json:"category"`
}

// RuleList is the output of list_rules, in the order rules are tried: the
// longest pattern first, then the oldest rule.
type RuleList struct {
	Rules []RuleView `json:"rules"`
}

// RuleSet is the output of set_rule. Before is the category the rule had,
// empty when it is new.
type RuleSet struct {
	Rule    RuleView `json:"rule"`
	Created bool     `json:"created"`
	Before  string   `json:"before,omitempty"`
}

// RuleDeleted is the output of delete_rule: the rule as it was.
type RuleDeleted struct {
	Rule RuleView `json:"rule"`
}

// EntryView is one ledger entry as a match, a change or an undo shows it:
// Kind is expense or transaction; Amount is signed as the ledger reads it
// (money out negative, so an expense's is negative); ReviewStatus is set
// for an imported transaction only.
type EntryView struct {
	Kind         string `json:"kind"`
	ID           int64  `json:"id"`
	Date         string `json:"date"`
	Description  string `json:"description"`
	Merchant     string `json:"merchant,omitempty"`
	Amount       Money  `json:"amount"`
	Category     string `json:"category"`
	ReviewStatus string `json:"review_status,omitempty"`
}

// EntryMatches is the output of match_entries: how many entries match,
// the newest few of them, and the person's rule with that pattern, if any.
type EntryMatches struct {
	Pattern string      `json:"pattern"`
	Range   string      `json:"range,omitempty"`
	From    string      `json:"from,omitempty"`
	To      string      `json:"to,omitempty"`
	Count   int         `json:"count"`
	Entries []EntryView `json:"entries"`
	Rule    *RuleView   `json:"rule,omitempty"`
}

// Recategorized is the output of recategorize: how many entries it filed
// under Category (entries already there are not counted).
type Recategorized struct {
	Pattern  string `json:"pattern"`
	Category string `json:"category"`
	Range    string `json:"range,omitempty"`
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
	Changed  int    `json:"changed"`
}
