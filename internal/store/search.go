package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kinds of search document.
const (
	SearchEntry    = "entry"    // a ledger entry; Ref is "expense-<id>" or "transaction-<id>"
	SearchDocument = "document" // an imported or uploaded file; Ref is its id
	SearchMessage  = "message"  // a conversation message; Ref is its frame's seq
)

// MaxSearchLimit bounds the hits of one search.
const MaxSearchLimit = 50

// SearchHit is one thing a search found, as the indexer described it.
// Parent is the conversation of a message and the source document of an
// entry read from a statement, empty otherwise. AmountMinor is set for
// entries only (signed: money out negative). Rank orders the hits of one
// list, best first (smaller is better); it means nothing across engines.
type SearchHit struct {
	Kind        string
	Ref         string
	Parent      string
	Title       string
	Snippet     string
	Date        string
	AmountMinor *int64
	Currency    string
	Rank        float64
}

// SearchFilter is one person's search. TenantID and UserID are required;
// Kinds empty means every kind; From and To (inclusive dates) empty do not
// filter; Limit is cut to 1..MaxSearchLimit.
type SearchFilter struct {
	TenantID, UserID string
	Query            string
	Kinds            []string
	From, To         string
	Limit            int
}

// limit is f's limit within bounds.
func (f SearchFilter) limit() int {
	return min(max(f.Limit, 1), MaxSearchLimit)
}

// where is the clause and arguments that keep a search to f's person,
// kinds and dates, on table alias d.
func (f SearchFilter) where() (string, []any) {
	var b strings.Builder
	b.WriteString(" AND d.tenant_id = ? AND d.user_id = ?")
	args := []any{f.TenantID, f.UserID}
	if len(f.Kinds) > 0 {
		b.WriteString(" AND d.kind IN (?" + strings.Repeat(", ?", len(f.Kinds)-1) + ")")
		for _, k := range f.Kinds {
			args = append(args, k)
		}
	}
	if f.From != "" {
		b.WriteString(" AND d.date >= ?")
		args = append(args, f.From)
	}
	if f.To != "" {
		b.WriteString(" AND d.date <= ?")
		args = append(args, f.To)
	}
	return b.String(), args
}

const searchHitCols = `d.kind, d.ref, d.parent, d.title, d.snippet, d.date, d.amount_minor, d.currency`

// searchCandCols is searchHitCols read from the candidates c of a query.
const searchCandCols = `c.kind, c.ref, c.parent, c.title, c.snippet, c.date, c.amount_minor, c.currency`

func scanSearchHit(rows rowScanner) (SearchHit, error) {
	var h SearchHit
	err := rows.Scan(&h.Kind, &h.Ref, &h.Parent, &h.Title, &h.Snippet, &h.Date, &h.AmountMinor, &h.Currency, &h.Rank)
	return h, err
}

// SearchLexical finds the person's documents whose words hold every word
// of f.Query as a prefix (accents and case folded, request words such as
// "find my" dropped), best first; when none holds them all, those holding
// any. Any query is safe: its words are letters and digits only by the
// time the engine sees them, and a query with no word finds nothing. It
// reads what the indexer has written (IndexSearch): a change not indexed
// yet is not found.
func (s *Store) SearchLexical(ctx context.Context, f SearchFilter) ([]SearchHit, error) {
	if f.TenantID == "" || f.UserID == "" {
		return nil, errors.New("search: a tenant and a user are required")
	}
	terms := queryTerms(f.Query)
	if len(terms) == 0 {
		return nil, nil
	}
	hits, err := s.searchTerms(ctx, f, terms, true)
	if err == nil && len(hits) == 0 && len(terms) > 1 {
		hits, err = s.searchTerms(ctx, f, terms, false)
	}
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return hits, nil
}

// maxRanked bounds the rows one lexical query ranks: a word found in
// more of the person's rows than this ranks only the newest maxRanked of
// them (by when they were indexed), so that a word in every line costs
// what a rare one does.
const maxRanked = 2000

// searchTerms runs one lexical query: every term (all) or any.
//
// Both engines pick the person's newest maxRanked matches in one pass
// that carries the shown columns along, and rank only those: the person's
// filter is applied before the limit, so another person's newer rows
// never crowd the person's own out, and no second read of search_docs
// joins the candidates back (Postgres ran that as a scan of every row).
func (s *Store) searchTerms(ctx context.Context, f SearchFilter, terms []string, all bool) ([]SearchHit, error) {
	where, args := f.where()
	var q string
	if s.d.name == dialectPostgres {
		join := "|"
		if all {
			join = "&"
		}
		// The tsquery is written into the statement, not passed as a
		// parameter: a prepared statement run often gets one generic
		// plan, made without knowing the words, and that plan read every
		// match of a word in a third of all lines to sort them by id (60
		// ms) where walking the newest rows takes 10. Its terms are
		// letters and digits only (searchWords), and quoted besides.
		// ts_rank is computed above the limit, for the candidates only.
		tq := `to_tsquery('simple', ` + pgString(tsQuery(terms, join)) + `)`
		q = `SELECT ` + searchCandCols + `, -ts_rank(c.tsv, ` + tq + `) AS rank
			FROM (SELECT d.id, ` + searchHitCols + `, d.tsv FROM search_docs d
				WHERE d.tsv @@ ` + tq + where + `
				ORDER BY d.id DESC LIMIT ` + strconv.Itoa(maxRanked) + `) c
			ORDER BY rank, c.date DESC, c.id DESC LIMIT ?`
	} else {
		join := " OR "
		if all {
			join = " AND "
		}
		// CROSS JOIN keeps FTS5 the outer loop: it walks the matches
		// newest first and stops at the person's maxRanked-th, instead of
		// the planner reading all of the person's rows to probe FTS5 with
		// each (what it chose for a plain JOIN).
		q = `SELECT ` + searchCandCols + `, c.rank
			FROM (SELECT d.id, ` + searchHitCols + `, bm25(search_fts) AS rank
				FROM search_fts CROSS JOIN search_docs d ON d.id = search_fts.rowid
				WHERE search_fts MATCH ?` + where + `
				ORDER BY search_fts.rowid DESC LIMIT ` + strconv.Itoa(maxRanked) + `) c
			ORDER BY c.rank, c.date DESC, c.id DESC LIMIT ?`
		args = append([]any{fts5Match(terms, join)}, args...)
	}
	args = append(args, f.limit())
	var hits []SearchHit
	err := s.readRows(ctx, q, args, func(rows rowScanner) error {
		hits = hits[:0]
		for rows.Next() {
			h, err := scanSearchHit(rows)
			if err != nil {
				return err
			}
			hits = append(hits, h)
		}
		return nil
	})
	return hits, err
}

// pgString is s as a Postgres string literal (standard_conforming_strings
// on, as it is by default since Postgres 9.1).
func pgString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
