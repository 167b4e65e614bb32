package store

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// DefaultCategories are the categories every person starts with; the ones
// a person adds come after them. An entry with no category and no rule
// that matches it is filed under CategoryOther.
var DefaultCategories = []string{"groceries", "dining", "transport", "housing", "utilities", "subscriptions", "software",
	"shopping", "health", "entertainment", "travel", "fees", "income", "transfers", CategoryOther}

// CategoryOther is where an entry goes that nothing else files.
const CategoryOther = "other"

// Bounds on what one person keeps.
const (
	MaxOwnCategories = 100
	MaxRules         = 200
)

// ErrLimit is returned (wrapped) when a person already holds as many
// categories or rules as they may.
var ErrLimit = errors.New("limit reached")

// foldFrom and foldTo are FoldText's table, letter for letter; migration
// 13 gives Postgres's purser_fold the same two strings.
const (
	foldFrom = "ABCDEFGHIJKLMNOPQRSTUVWXYZÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦħĨĩĪīĬĭĮįİıĴĵĶķĹĺĻļĽľŁłŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŧŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽž"
	foldTo   = "abcdefghijklmnopqrstuvwxyzaaaaaaceeeeiiiinoooooouuuuyaaaaaaceeeeiiiinoooooouuuuyyaaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiijjkkllllllllnnnnnnoooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzz"
)

var foldMap = func() map[rune]rune {
	from, to := []rune(foldFrom), []rune(foldTo)
	if len(from) != len(to) {
		panic("store: fold table halves differ in length")
	}
	m := make(map[rune]rune, len(from))
	for i, r := range from {
		m[r] = to[i]
	}
	return m
}()

// FoldText is how rules compare text: ASCII upper case and the accented
// Latin letters become plain lower case ("Café" and "CAFE" are "cafe");
// every other character stays as it is. Both engines fold alike (the SQL
// function purser_fold), so a pattern matches the same entries on each.
func FoldText(s string) string {
	return strings.Map(func(r rune) rune {
		if f, ok := foldMap[r]; ok {
			return f
		}
		return r
	}, s)
}

func init() {
	// Registered before any connection opens; every SQLite connection
	// of the process has it.
	err := sqlite.RegisterDeterministicScalarFunction("purser_fold", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case nil:
			return nil, nil
		case string:
			return FoldText(v), nil
		case []byte:
			return FoldText(string(v)), nil
		default:
			return nil, fmt.Errorf("purser_fold: unexpected %T", v)
		}
	})
	if err != nil {
		panic("store: register purser_fold: " + err.Error())
	}
}

// Category is one of a person's categories; Own marks one they added.
type Category struct {
	Name string
	Own  bool
}

// ListCategories returns the user's categories: the defaults in their
// order, then the user's own by name.
func (s *Store) ListCategories(ctx context.Context, tenantID, userID string) ([]Category, error) {
	out := make([]Category, 0, len(DefaultCategories))
	for _, c := range DefaultCategories {
		out = append(out, Category{Name: c})
	}
	err := s.readRows(ctx, `SELECT name FROM categories WHERE tenant_id = ? AND user_id = ? ORDER BY name`, []any{tenantID, userID},
		func(rows rowScanner) error {
			out = out[:len(DefaultCategories)]
			for rows.Next() {
				c := Category{Own: true}
				if err := rows.Scan(&c.Name); err != nil {
					return err
				}
				out = append(out, c)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("list categories: %w", err)
	}
	return out, nil
}

// HasCategory reports whether name is one of the user's categories.
func (s *Store) HasCategory(ctx context.Context, tenantID, userID, name string) (bool, error) {
	if slices.Contains(DefaultCategories, name) {
		return true, nil
	}
	var n int
	if err := s.readRow(ctx, `SELECT COUNT(*) FROM categories WHERE tenant_id = ? AND user_id = ? AND name = ?`, []any{tenantID, userID, name}, &n); err != nil {
		return false, fmt.Errorf("find category: %w", err)
	}
	return n > 0, nil
}

// AddCategory adds name to the user's own categories; added is false when
// the user already has it (a default or their own). A user holding
// MaxOwnCategories gets ErrLimit.
func (s *Store) AddCategory(ctx context.Context, tenantID, userID, name string, at time.Time) (added bool, err error) {
	if name == "" {
		return false, errors.New("add category: a name is required")
	}
	if slices.Contains(DefaultCategories, name) {
		return false, nil
	}
	err = s.InTx(ctx, func(tx *Store) error {
		var n int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM categories WHERE tenant_id = ? AND user_id = ?`, tenantID, userID).Scan(&n); err != nil {
			return err
		}
		k, err := tx.exec(ctx, `INSERT INTO categories (tenant_id, user_id, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, name) DO NOTHING`,
			tenantID, userID, name, tx.d.ts(tx.orNow(at)))
		if err != nil {
			return err
		}
		if k > 0 && n >= MaxOwnCategories {
			return ErrLimit // rolls the insert back
		}
		added = k > 0
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("add category: %w", err)
	}
	return added, nil
}

// Rule files entries whose description or merchant contains Pattern
// (folded, see FoldText) under Category. ID is numbered per user.
type Rule struct {
	TenantID  string
	UserID    string
	ID        int64
	Pattern   string
	Category  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

const ruleCols = `id, user_id, pattern, category, created_at, updated_at`

func scanRule(tenantID string, sc interface{ Scan(...any) error }) (Rule, error) {
	r := Rule{TenantID: tenantID}
	err := sc.Scan(&r.ID, &r.UserID, &r.Pattern, &r.Category, timeCol{&r.CreatedAt}, timeCol{&r.UpdatedAt})
	return r, err
}

// SortRules puts rules in the order they are tried: the longest pattern
// first (the more specific rule), then the oldest (lowest id).
func SortRules(rules []Rule) {
	slices.SortStableFunc(rules, func(a, b Rule) int {
		return cmp.Or(cmp.Compare(utf8.RuneCountInString(b.Pattern), utf8.RuneCountInString(a.Pattern)), cmp.Compare(a.ID, b.ID))
	})
}

// ListRules returns the user's rules in the order they are tried (see
// SortRules).
func (s *Store) ListRules(ctx context.Context, tenantID, userID string) ([]Rule, error) {
	var out []Rule
	err := s.readRows(ctx, `SELECT `+ruleCols+` FROM category_rules WHERE tenant_id = ? AND user_id = ? ORDER BY id`+limitClause(MaxRules), []any{tenantID, userID},
		func(rows rowScanner) error {
			out = out[:0]
			for rows.Next() {
				r, err := scanRule(tenantID, rows)
				if err != nil {
					return err
				}
				out = append(out, r)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	SortRules(out)
	return out, nil
}

// GetRule returns the user's rule with pattern (folded here), or
// ErrNotFound.
func (s *Store) GetRule(ctx context.Context, tenantID, userID, pattern string) (Rule, error) {
	r, err := scanRule(tenantID, s.queryRow(ctx, `SELECT `+ruleCols+` FROM category_rules WHERE tenant_id = ? AND user_id = ? AND pattern = ?`,
		tenantID, userID, FoldText(pattern)))
	if err != nil {
		return Rule{}, fmt.Errorf("get rule: %w", notFound(err))
	}
	return r, nil
}

// PutRule files r.Pattern (folded here) under r.Category: the user's rule
// with that pattern gets the category, or a new rule is made (created
// true). A user holding MaxRules rules gets ErrLimit for a new one.
func (s *Store) PutRule(ctx context.Context, r Rule) (_ Rule, created bool, err error) {
	r.Pattern = FoldText(strings.TrimSpace(r.Pattern))
	if r.Pattern == "" || r.Category == "" {
		return Rule{}, false, errors.New("put rule: a pattern and a category are required")
	}
	at := normTime(s.orNow(r.UpdatedAt))
	err = s.InTx(ctx, func(tx *Store) error {
		cur, err := tx.GetRule(ctx, r.TenantID, r.UserID, r.Pattern)
		switch {
		case err == nil:
			cur.Category, cur.UpdatedAt = r.Category, at
			_, err = tx.exec(ctx, `UPDATE category_rules SET category = ?, updated_at = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`,
				cur.Category, tx.d.ts(at), cur.TenantID, cur.UserID, cur.ID)
			r, created = cur, false
			return err
		case !errors.Is(err, ErrNotFound):
			return err
		}
		var n int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM category_rules WHERE tenant_id = ? AND user_id = ?`, r.TenantID, r.UserID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxRules {
			return ErrLimit
		}
		id, err := tx.counter(ctx, r.TenantID, r.UserID, "rule")
		if err != nil {
			return err
		}
		r.ID, r.CreatedAt, r.UpdatedAt, created = id, at, at, true
		_, err = tx.exec(ctx, `INSERT INTO category_rules (tenant_id, `+ruleCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			r.TenantID, r.ID, r.UserID, r.Pattern, r.Category, tx.d.ts(at), tx.d.ts(at))
		return err
	})
	if err != nil {
		return Rule{}, false, fmt.Errorf("put rule: %w", err)
	}
	return r, created, nil
}

// DeleteRule deletes the user's rule with pattern (folded here) and
// returns it, or ErrNotFound.
func (s *Store) DeleteRule(ctx context.Context, tenantID, userID, pattern string) (Rule, error) {
	var r Rule
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		if r, err = tx.GetRule(ctx, tenantID, userID, pattern); err != nil {
			return err
		}
		_, err = tx.exec(ctx, `DELETE FROM category_rules WHERE tenant_id = ? AND user_id = ? AND id = ?`, tenantID, userID, r.ID)
		return err
	})
	if err != nil {
		return Rule{}, fmt.Errorf("delete rule: %w", err)
	}
	return r, nil
}

// MatchRule is the first of rules (in the order SortRules gives) whose
// pattern one of texts contains, folded.
func MatchRule(rules []Rule, texts ...string) (Rule, bool) {
	folded := make([]string, 0, len(texts))
	for _, t := range texts {
		if t != "" {
			folded = append(folded, FoldText(t))
		}
	}
	for _, r := range rules {
		for _, t := range folded {
			if strings.Contains(t, r.Pattern) {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// Categorize is the category the user's rules give an entry with texts
// (its description and merchant), and the rule that gave it; ok is false
// when no rule matches.
func (s *Store) Categorize(ctx context.Context, tenantID, userID string, texts ...string) (Rule, bool, error) {
	rules, err := s.ListRules(ctx, tenantID, userID)
	if err != nil {
		return Rule{}, false, err
	}
	r, ok := MatchRule(rules, texts...)
	return r, ok, nil
}

// PatternFilter selects the user's ledger entries whose description or
// merchant contains Pattern, folded; From and To, when set, are inclusive
// dates.
type PatternFilter struct {
	TenantID, UserID string
	Pattern          string
	From, To         string
}

func (f PatternFilter) where(descCol, merchantCol string) (*where, error) {
	p := FoldText(strings.TrimSpace(f.Pattern))
	if f.TenantID == "" || f.UserID == "" || p == "" {
		return nil, errors.New("a tenant, a user and a pattern are required")
	}
	w := &where{}
	w.add("tenant_id = ?", f.TenantID)
	w.add("user_id = ?", f.UserID)
	like := "%" + likeEscape(p) + "%"
	if merchantCol == "" {
		w.add(`purser_fold(`+descCol+`) LIKE ? ESCAPE '\'`, like)
	} else {
		w.add(`(purser_fold(`+descCol+`) LIKE ? ESCAPE '\' OR purser_fold(`+merchantCol+`) LIKE ? ESCAPE '\')`, like, like)
	}
	if f.From != "" {
		w.add("date >= ?", f.From)
	}
	if f.To != "" {
		w.add("date <= ?", f.To)
	}
	return w, nil
}

// MatchEntries counts the entries f selects and returns the newest limit
// of them (newest first, as ListLedger orders them).
func (s *Store) MatchEntries(ctx context.Context, f PatternFilter, limit int) (count int, first []LedgerEntry, err error) {
	w, err := f.where("description", "merchant")
	if err != nil {
		return 0, nil, fmt.Errorf("match entries: %w", err)
	}
	if err := s.readRow(ctx, `SELECT COUNT(*) FROM ledger_entries`+w.sql(), w.args, &count); err != nil {
		return 0, nil, fmt.Errorf("match entries: %w", err)
	}
	err = s.readRows(ctx, `SELECT `+ledgerCols+` FROM ledger_entries`+w.sql()+` ORDER BY date DESC, kind DESC, id DESC`+limitClause(limit), w.args,
		func(rows rowScanner) error {
			first = first[:0]
			for rows.Next() {
				e, err := scanLedgerEntry(rows, f.TenantID)
				if err != nil {
					return err
				}
				first = append(first, e)
			}
			return nil
		})
	if err != nil {
		return 0, nil, fmt.Errorf("match entries: %w", err)
	}
	return count, first, nil
}

// Recategorize files every entry f selects under category and returns how
// many changed (entries already there are left alone).
func (s *Store) Recategorize(ctx context.Context, f PatternFilter, category string, at time.Time) (int, error) {
	if category == "" {
		return 0, errors.New("recategorize: a category is required")
	}
	we, err := f.where("item", "")
	if err != nil {
		return 0, fmt.Errorf("recategorize: %w", err)
	}
	wt, _ := f.where("description", "vendor")
	we.add("category <> ?", category)
	wt.add("category <> ?", category)
	var n int64
	err = s.InTx(ctx, func(tx *Store) error {
		a, err := tx.exec(ctx, `UPDATE expenses SET category = ?, updated_at = ?`+we.sql(), append([]any{category, tx.d.ts(tx.orNow(at))}, we.args...)...)
		if err != nil {
			return err
		}
		b, err := tx.exec(ctx, `UPDATE transactions SET category = ?`+wt.sql(), append([]any{category}, wt.args...)...)
		n = a + b
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("recategorize: %w", err)
	}
	return int(n), nil
}
