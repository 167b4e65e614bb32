package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
)

// upload posts a multipart form to /v1/uploads: a file part and any other
// fields, in order. It returns the status, the body and its JSON.
func upload(t *testing.T, info Info, token, filename string, data []byte, accept string, fields ...string) (int, string, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	fw, err := w.CreateFormFile("file", filename)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	for i := 0; i+1 < len(fields); i += 2 {
		w.WriteField(fields[i], fields[i+1])
	}
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, "http://"+info.HTTPAddr+"/v1/uploads", &body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", w.FormDataContentType())
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := (&http.Client{Timeout: 3 * time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("POST /v1/uploads: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, string(b), out
}

// Five statements a person has, one of each format, uploaded from the chat
// and approved, land in the ledger exactly: the summary API's count and
// each currency's net are the files' own (their manifest in
// services/toolrunner/statements/testdata/samples).
func TestUploadedStatementsLandInTheLedger(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	tok := mint(t, info, DemoTenant, "uma", auth.RoleMember)
	// The QIF names no currency: Uma's is pounds.
	if status, out := chatCall(t, info, tok, `{"message":"my currency is GBP"}`); status != 200 || out["proposal"] == nil {
		t.Fatalf("set the currency: %d %v", status, out)
	} else {
		approveHTTP(t, info, tok, out)
	}
	files := []struct {
		name  string
		count int
		net   map[string]string
	}{
		{"generic_checking_v102.ofx", 3, map[string]string{"USD": "-59.50"}},
		{"handelsbanken_camt_053_ver_2_extended_uk_account.xml", 2, map[string]string{"GBP": "-0.10"}},
		{"fruitl00p_Bunq_sample.sta", 111, map[string]string{"EUR": "-26.67"}},
		{"rustqif_monzo.qif", 13, map[string]string{"GBP": "558.45"}},
		{"tab_delimited_eur.csv", 2, map[string]string{"EUR": "-15.00"}},
	}
	want, count := map[string]*big.Rat{}, 0
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("../../services/toolrunner/statements/testdata/samples", f.name))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond) // a person's pace
		status, raw, out := upload(t, info, tok, f.name, data, "", "message", "here is my statement")
		if status != 200 || out["proposal"] == nil || out["document_id"] == nil {
			t.Fatalf("upload %s: %d %s, want a proposal to import it and the document's id", f.name, status, raw)
		}
		if summary := out["answer"].(string); !strings.Contains(summary, f.name) || !strings.Contains(summary, fmt.Sprintf("%d new", f.count)) {
			t.Fatalf("upload %s: the proposal says %q, want the file's name and %d new lines", f.name, summary, f.count)
		}
		approveHTTP(t, info, tok, out)
		count += f.count
		for ccy, v := range f.net {
			r, _ := new(big.Rat).SetString(v)
			if want[ccy] == nil {
				want[ccy] = new(big.Rat)
			}
			want[ccy].Add(want[ccy], r)
		}
	}
	// The imports run after the yes; the ledger has them all once the last
	// is done.
	var sum testSummary
	deadline := time.Now().Add(time.Minute)
	for {
		if status, raw := getLedger(t, info, tok, "/v1/ledger/summary?from=2009-01-01&to=2026-12-31", &sum); status != 200 {
			t.Fatalf("summary = %d %s", status, raw)
		}
		if sum.Count >= count || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	got := map[string]*big.Rat{}
	for _, m := range sum.Income {
		got[m.Currency] = new(big.Rat).Add(orZero(got[m.Currency]), big.NewRat(m.Minor, 100))
	}
	for _, m := range sum.Spending {
		got[m.Currency] = new(big.Rat).Sub(orZero(got[m.Currency]), big.NewRat(m.Minor, 100))
	}
	if sum.Count != count {
		t.Errorf("the ledger holds %d entries, want %d", sum.Count, count)
	}
	for ccy, w := range want {
		if got[ccy] == nil || got[ccy].Cmp(w) != 0 {
			t.Errorf("%s net %v, want %s", ccy, got[ccy], w.FloatString(2))
		}
	}
}

func orZero(r *big.Rat) *big.Rat {
	if r == nil {
		return new(big.Rat)
	}
	return r
}

// approveHTTP approves the proposal of a chat or upload answer.
func approveHTTP(t *testing.T, info Info, tok string, out map[string]any) {
	t.Helper()
	p := out["proposal"].(map[string]any)
	time.Sleep(600 * time.Millisecond)
	body := fmt.Sprintf(`{"confirm":{"proposal_id":%q,"decision":"approve"},"conversation_id":%q}`, p["proposal_id"], out["conversation_id"])
	if status, a := chatCall(t, info, tok, body); status != 200 {
		t.Fatalf("approve: %d %v", status, a)
	}
}

// What is not a document, or too much of one, is refused with a JSON
// error that names the limit or the kinds read, and nothing is stored:
// a 30 MiB file, a program named statement.csv, a form with a field the
// endpoint does not take, and a form with no file.
func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	tok := mint(t, info, DemoTenant, "rex", auth.RoleMember)
	elf := append([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00"), bytes.Repeat([]byte{0, 1, 2, 3}, 4096)...)
	cases := []struct {
		name, file string
		data       []byte
		fields     []string
		status     int
		error      string
		says       string
	}{
		{"30 MiB", "big.csv", bytes.Repeat([]byte("2024-01-01,coffee,-1.00\n"), 30<<20/24+1), nil, 413, "too_large", "20 MiB"},
		{"a program named statement.csv", "statement.csv", elf, nil, 415, "unsupported_media_type", "CSV"},
		{"an unknown field", "s.csv", []byte("Date,Amount\n2024-01-01,-1.00\n"), []string{"currency", "EUR"}, 400, "bad_request", "unknown field"},
		{"a bad conversation id", "s.csv", []byte("Date,Amount\n2024-01-01,-1.00\n"), []string{"conversation_id", "a b/c"}, 400, "bad_request", "conversation_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, raw, out := upload(t, info, tok, c.file, c.data, "", c.fields...)
			if status != c.status || out["error"] != c.error || !strings.Contains(raw, c.says) {
				t.Fatalf("got %d %s, want %d %s naming %q", status, raw, c.status, c.error, c.says)
			}
		})
	}
	// Nothing reached the ledger or the conversation.
	var sum testSummary
	if status, raw := getLedger(t, info, tok, "/v1/ledger/summary?from=2000-01-01&to=2030-12-31", &sum); status != 200 || sum.Count != 0 {
		t.Fatalf("summary after refusals = %d %s, want nothing", status, raw)
	}
}

// Progress as server-sent events: the upload is acknowledged, the file is
// said stored, the reading shows as a tool step, and the proposal ends it.
func TestUploadStreamsProgress(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	tok := mint(t, info, DemoTenant, "sia", auth.RoleMember)
	data, err := os.ReadFile("../../services/toolrunner/statements/testdata/samples/generic_checking_v102.ofx")
	if err != nil {
		t.Fatal(err)
	}
	status, raw, _ := upload(t, info, tok, "checking.ofx", data, "text/event-stream")
	if status != 200 {
		t.Fatalf("upload = %d %s", status, raw)
	}
	var events []string
	for _, line := range strings.Split(raw, "\n") {
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, ev)
		}
	}
	order := strings.Join(events, " ")
	for _, want := range []string{"ack uploaded", "tool_start", "tool_result", "proposal done"} {
		if !strings.Contains(order, want) {
			t.Fatalf("events %q, want %q in order", order, want)
		}
	}
	if !strings.Contains(raw, `"document_id":"doc-`) || !strings.Contains(raw, `"kind":"text"`) {
		t.Fatalf("the uploaded event does not name the document: %s", raw)
	}
}

// A receipt uploaded from the chat becomes one expense proposal with the
// printed total, currency and date, saying how it was read; approved, the
// expense is in the ledger. A photo whose name lies about its format (JPEG
// data named .png) is read by what it is.
func TestUploadedReceiptsBecomeExpenseProposals(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	tok := mint(t, info, DemoTenant, "rae", auth.RoleMember)
	cases := []struct {
		file string
		want []string
	}{
		{"rewebon_1.pdf", []string{"€13.05", "2020-01-13", "read from the PDF's text"}},
		{"azdi_receipt.png", []string{"$2,516.28", "2019-06-10", "read by OCR"}},
	}
	for i, c := range cases {
		data, err := os.ReadFile(filepath.Join("../../services/toolrunner/statements/testdata/receipts", c.file))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond)
		status, raw, out := upload(t, info, tok, c.file, data, "", "conversation_id", fmt.Sprintf("receipts-%d", i))
		if status != 200 || out["proposal"] == nil {
			t.Fatalf("upload %s: %d %s, want an expense proposal", c.file, status, raw)
		}
		summary := out["answer"].(string)
		t.Logf("%s: %s", c.file, summary)
		if !strings.HasPrefix(summary, "Add expense") {
			t.Fatalf("upload %s: %q, want an expense proposal", c.file, summary)
		}
		for _, w := range c.want {
			if !strings.Contains(summary, w) {
				t.Errorf("upload %s: %q does not say %q", c.file, summary, w)
			}
		}
		approveHTTP(t, info, tok, out)
	}
	var sum testSummary
	if status, raw := getLedger(t, info, tok, "/v1/ledger/summary?from=2019-01-01&to=2020-12-31", &sum); status != 200 || sum.Count != 2 {
		t.Fatalf("summary = %d %s, want the two receipts' expenses", status, raw)
	}
}

// Text that is no statement, or a PDF that is broken, is read and
// answered in words, with no proposal and never a server error.
func TestUploadsThatCannotBeReadAreAnswered(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	tok := mint(t, info, DemoTenant, "ula", auth.RoleMember)
	for i, f := range []struct{ name, data string }{
		{"notes.txt", "dear diary, today I bought nothing at all\n"},
		{"statement.pdf", "%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"},
	} {
		time.Sleep(600 * time.Millisecond)
		status, raw, out := upload(t, info, tok, f.name, []byte(f.data), "", "conversation_id", fmt.Sprintf("bad-%d", i))
		if status != 200 || out["proposal"] != nil || !strings.Contains(fmt.Sprint(out["answer"]), "couldn't read") {
			t.Fatalf("%s: %d %s, want an answer saying it could not be read and no proposal", f.name, status, raw)
		}
	}
}
