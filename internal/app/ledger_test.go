package app

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/internal/auth"
)

// getLedger reads GET path (with its query) as token: the status and the
// raw body, decoded into out when out is not nil.
func getLedger(t *testing.T, info Info, token, path string, out any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+info.HTTPAddr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("GET %s: X-Content-Type-Options = %q, want nosniff", path, got)
	}
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, b)
		}
	}
	return resp.StatusCode, string(b)
}

type testMoney struct {
	Minor    int64  `json:"minor"`
	Currency string `json:"currency"`
}

type testLedger struct {
	Entries []struct {
		ID          string    `json:"id"`
		Kind        string    `json:"kind"`
		Date        string    `json:"date"`
		Amount      testMoney `json:"amount"`
		Description string    `json:"description"`
		Category    string    `json:"category"`
		Account     string    `json:"account"`
		Source      string    `json:"source"`
		Links       []any     `json:"links"`
	} `json:"entries"`
	NextCursor string `json:"next_cursor"`
}

type testSummary struct {
	From       string      `json:"from"`
	To         string      `json:"to"`
	Count      int         `json:"count"`
	Spending   []testMoney `json:"spending"`
	Income     []testMoney `json:"income"`
	ByCategory []struct {
		Category string      `json:"category"`
		Spending []testMoney `json:"spending"`
	} `json:"by_category"`
}

// The host app reads back, through the ledger API, what a person added
// in chat: the exact signed amount and the month's totals. Another person
// of the same tenant sees none of it, and bad parameters are refused.
func TestLedgerReadAPI(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	ann := mint(t, info, "acme", "ann", auth.RoleMember)
	bob := mint(t, info, "acme", "bob", auth.RoleMember)
	addExpense(t, info, ann, "add 42.17 EUR for zanzibar sushi on 2026-11-20")
	addExpense(t, info, ann, "add 7.05 EUR for quokka tea on 2026-11-03")

	var ledger testLedger
	if status, raw := getLedger(t, info, ann, "/v1/ledger?from=2026-11-01&to=2026-11-30", &ledger); status != http.StatusOK {
		t.Fatalf("ann's ledger = %d %s", status, raw)
	}
	if len(ledger.Entries) != 2 {
		t.Fatalf("ann's ledger has %d entries, want 2: %+v", len(ledger.Entries), ledger)
	}
	sushi, tea := ledger.Entries[0], ledger.Entries[1]
	if sushi.Amount != (testMoney{Minor: -4217, Currency: "EUR"}) || sushi.Date != "2026-11-20" || sushi.Kind != "expense" ||
		!strings.Contains(sushi.Description, "zanzibar sushi") || !strings.HasPrefix(sushi.ID, "expense-") || sushi.Source != "" ||
		sushi.Links == nil || len(sushi.Links) != 0 {
		t.Errorf("newest entry = %+v, want the sushi, -4217 EUR on 2026-11-20, an expense id, no source, no links", sushi)
	}
	if tea.Amount != (testMoney{Minor: -705, Currency: "EUR"}) || tea.ID == sushi.ID {
		t.Errorf("older entry = %+v, want the tea, -705 EUR, its own id", tea)
	}
	if ledger.NextCursor != "" {
		t.Errorf("next_cursor = %q on the only page", ledger.NextCursor)
	}

	var page testLedger
	if status, raw := getLedger(t, info, ann, "/v1/ledger?from=2026-11-01&to=2026-11-30&limit=1", &page); status != http.StatusOK || len(page.Entries) != 1 || page.NextCursor == "" {
		t.Fatalf("first page of one = %d %s, want the sushi and a cursor", status, raw)
	}
	var rest testLedger
	if status, raw := getLedger(t, info, ann, "/v1/ledger?from=2026-11-01&to=2026-11-30&limit=1&cursor="+page.NextCursor, &rest); status != http.StatusOK ||
		len(rest.Entries) != 1 || rest.Entries[0].ID != tea.ID || rest.NextCursor != "" {
		t.Errorf("second page of one = %d %s, want the tea and no cursor", status, raw)
	}
	var found testLedger
	if status, raw := getLedger(t, info, ann, "/v1/ledger?from=2026-11-01&to=2026-11-30&q=ZANZIBAR", &found); status != http.StatusOK ||
		len(found.Entries) != 1 || found.Entries[0].ID != sushi.ID {
		t.Errorf("search for ZANZIBAR = %d %s, want the sushi alone", status, raw)
	}

	var sum testSummary
	if status, raw := getLedger(t, info, ann, "/v1/ledger/summary?from=2026-11-01&to=2026-11-30", &sum); status != http.StatusOK {
		t.Fatalf("ann's summary = %d %s", status, raw)
	}
	if sum.From != "2026-11-01" || sum.To != "2026-11-30" || sum.Count != 2 {
		t.Errorf("summary covers %s..%s with %d entries, want 2026-11-01..2026-11-30 with 2", sum.From, sum.To, sum.Count)
	}
	if diff := cmp.Diff([]testMoney{{Minor: 4217 + 705, Currency: "EUR"}}, sum.Spending); diff != "" {
		t.Errorf("spending (-want +got):\n%s", diff)
	}
	if sum.Income == nil || len(sum.Income) != 0 {
		t.Errorf("income = %+v, want an empty list", sum.Income)
	}
	var byCategory int64
	for _, c := range sum.ByCategory {
		if c.Category != sushi.Category && c.Category != tea.Category {
			t.Errorf("category %q is neither entry's", c.Category)
		}
		for _, m := range c.Spending {
			byCategory += m.Minor
		}
	}
	if byCategory != 4217+705 {
		t.Errorf("categories add up to %d, want %d: %+v", byCategory, 4217+705, sum.ByCategory)
	}

	// Bob, of the same tenant, reads nothing of Ann's.
	var bobs testLedger
	if status, raw := getLedger(t, info, bob, "/v1/ledger?from=2026-11-01&to=2026-11-30", &bobs); status != http.StatusOK || len(bobs.Entries) != 0 ||
		strings.Contains(raw, "zanzibar") {
		t.Errorf("bob's ledger = %d %s, want no entries", status, raw)
	}
	var bobSum testSummary
	if status, raw := getLedger(t, info, bob, "/v1/ledger/summary?from=2026-11-01&to=2026-11-30", &bobSum); status != http.StatusOK || bobSum.Count != 0 ||
		len(bobSum.Spending) != 0 || len(bobSum.ByCategory) != 0 {
		t.Errorf("bob's summary = %d %s, want nothing", status, raw)
	}

	tests := []struct {
		name, path, wantDetail string
	}{
		{"bad from", "/v1/ledger?from=2026-11-31", "from"},
		{"not a date", "/v1/ledger?to=yesterday", "to"},
		{"backwards", "/v1/ledger?from=2026-11-30&to=2026-11-01", "to"},
		{"limit zero", "/v1/ledger?limit=0", "limit"},
		{"limit too large", "/v1/ledger?limit=201", "limit"},
		{"limit not a number", "/v1/ledger?limit=ten", "limit"},
		{"unknown parameter", "/v1/ledger?user_id=ann", "user_id"},
		{"parameter twice", "/v1/ledger?from=2026-11-01&from=2026-10-01", "from"},
		{"bad cursor", "/v1/ledger?cursor=nonsense", "cursor"},
		{"control character in q", "/v1/ledger?q=a%07b", "q"},
		{"summary bad date", "/v1/ledger/summary?from=2026-02-30", "from"},
		{"summary backwards", "/v1/ledger/summary?from=2026-12-01&to=2026-11-01", "to"},
		{"summary takes no limit", "/v1/ledger/summary?limit=5", "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, raw := getLedger(t, info, ann, tt.path, nil)
			if status != http.StatusBadRequest {
				t.Fatalf("GET %s = %d %s, want 400", tt.path, status, raw)
			}
			var body struct{ Error, Detail string }
			if err := json.Unmarshal([]byte(raw), &body); err != nil || body.Error != "bad_request" || !strings.Contains(body.Detail, tt.wantDetail) {
				t.Errorf("GET %s body = %s, want bad_request naming %q", tt.path, raw, tt.wantDetail)
			}
		})
	}

	if status, _ := getLedger(t, info, "not-a-token", "/v1/ledger", nil); status != http.StatusUnauthorized {
		t.Errorf("ledger without a valid token = %d, want 401", status)
	}
}
