package mailbox

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Candidate is what ranking sees of a message (never its body).
type Candidate struct {
	ID          string
	From        string
	Subject     string
	Date        time.Time
	Attachments []string
}

var (
	statementWords = []string{"statement", "e-statement", "estatement", "transactions", "account activity", "kontoauszug", "relevé"}
	bankWords      = []string{"bank", "visa", "mastercard", "amex", "card", "barclays", "hsbc", "lloyds", "natwest", "santander", "monzo", "revolut", "chase", "citi", "capital one", "nationwide", "halifax", "statements@", "alerts@"}
	statementExts  = map[string]float64{".csv": 3, ".ofx": 3, ".qfx": 3, ".tsv": 2, ".pdf": 1}
	stopWords      = map[string]bool{"my": true, "the": true, "last": true, "latest": true, "recent": true, "a": true, "an": true, "for": true, "of": true, "and": true, "find": true, "me": true, "please": true, "email": true, "mail": true}
)

// Rank scores messages for a statement-like query by sender, subject,
// attachment names and types, query words and recency, keeps those within
// days of now, and returns the best limit, best first.
func Rank(query string, msgs []Candidate, days, limit int, now time.Time) []contracts.MailSummary {
	var terms []string
	for _, w := range strings.Fields(strings.ToLower(query)) {
		w = strings.Trim(w, ".,!?'\"")
		if w != "" && !stopWords[w] {
			terms = append(terms, w)
		}
	}
	since := now.AddDate(0, 0, -days)
	var out []contracts.MailSummary
	for _, m := range msgs {
		if !m.Date.IsZero() && (m.Date.Before(since) || m.Date.After(now.Add(24*time.Hour))) {
			continue
		}
		from, subject := strings.ToLower(m.From), strings.ToLower(m.Subject)
		names := strings.ToLower(strings.Join(m.Attachments, " "))
		score := 0.0
		for _, t := range terms {
			switch {
			case strings.Contains(subject, t):
				score += 3
			case strings.Contains(names, t):
				score += 2
			case strings.Contains(from, t):
				score += 2
			}
		}
		if containsAny(subject, statementWords) || containsAny(names, statementWords) {
			score += 2
		}
		if containsAny(from, bankWords) {
			score += 1.5
		}
		best := 0.0
		for _, a := range m.Attachments {
			best = max(best, statementExts[strings.ToLower(filepath.Ext(a))])
		}
		score += best
		if score == 0 {
			continue
		}
		if !m.Date.IsZero() {
			age := now.Sub(m.Date).Hours() / 24
			score += 2 * max(0, 1-age/float64(max(days, 1))) // newer is better
		}
		attachments := m.Attachments
		if attachments == nil {
			attachments = []string{}
		}
		out = append(out, contracts.MailSummary{ID: m.ID, From: m.From, Subject: m.Subject, Date: m.Date, Attachments: attachments,
			Score: float64(int(score*100)) / 100})
	}
	slices.SortStableFunc(out, func(a, b contracts.MailSummary) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.Date.After(b.Date):
			return -1
		case a.Date.Before(b.Date):
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
