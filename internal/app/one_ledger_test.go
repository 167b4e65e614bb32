package app

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The ledger as a person meets it through purser up: one bank's October
// as MT940, the same month exported as CSV, and an overlapping CSV whose
// Costa line is the coffee typed by hand the day before. The summary API
// counts each line once (the typed coffee with its bank line), a statement
// already held is "nothing new" with no proposal, "undo the last import"
// takes back exactly that import, and a missing expense is answered
// without a proposal. The files are services/toolrunner/testdata/dedupe;
// the figures below are summed from their CSV lines.
func TestOneLedgerAcrossStatementsUndoAndLookups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mail := filepath.Join(dir, DemoTenant, "lena")
	if err := os.MkdirAll(mail, 0o700); err != nil {
		t.Fatal(err)
	}
	deliver := func(i int, subject, file, media string) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("../../services/toolrunner/testdata/dedupe", file))
		if err != nil {
			t.Fatal(err)
		}
		eml := "From: NatWest <statements@natwest.example>\r\nSubject: " + subject + "\r\nDate: " + time.Now().Add(time.Duration(i-10)*time.Minute).Format(time.RFC1123Z) +
			"\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nAttached.\r\n" +
			"--b\r\nContent-Type: " + media + "\r\nContent-Disposition: attachment; filename=\"" + file + "\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
			base64.StdEncoding.EncodeToString(data) + "\r\n--b--\r\n"
		if err := os.WriteFile(filepath.Join(mail, fmt.Sprintf("%02d.eml", i)), []byte(eml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	info := startUp(t, func(c *config.Config) { c.MailboxDir = dir })
	lena := mint(t, info, DemoTenant, "lena", auth.RoleMember)
	c := dial(t, info, lena)
	turn := 0
	// A person sends at most 2 turns a second (bursts of 10): the test
	// keeps to it, as a client must.
	pace := func() { time.Sleep(600 * time.Millisecond) }
	say := func(text string) contracts.ServerFrame {
		t.Helper()
		for {
			pace()
			turn++
			c.send(fmt.Sprintf(`{"type":"message","id":"m%d","conversation_id":"ledger","text":%q}`, turn, text))
			f := c.nextAny()
			for f.Type != contracts.FrameAnswer && f.Type != contracts.FrameProposal && f.Type != contracts.FrameClarify && f.Type != contracts.FrameError {
				f = c.nextAny()
			}
			if f.Error == nil || f.Error.Code != contracts.ErrCodeRateLimited {
				return f
			}
			// A person typing this fast is asked to wait; so is the test.
			time.Sleep(time.Second)
		}
	}
	approve := func(p contracts.ServerFrame) contracts.ServerFrame {
		t.Helper()
		pace()
		turn++
		c.send(fmt.Sprintf(`{"type":"confirm","id":"m%d","conversation_id":"ledger","proposal_id":%q,"decision":"approve"}`, turn, p.Proposal.ProposalID))
		return c.next(contracts.FrameAnswer)
	}
	importing := func(text, file string) {
		t.Helper()
		p := say(text)
		if p.Proposal == nil || !strings.Contains(p.Proposal.Summary, file) {
			t.Fatalf("%q: got %s, want a proposal to import %s", text, describeFrame(p), file)
		}
		pace()
		turn++
		c.send(fmt.Sprintf(`{"type":"confirm","id":"m%d","conversation_id":"ledger","proposal_id":%q,"decision":"approve"}`, turn, p.Proposal.ProposalID))
		// The import runs beside the answer; its notification ends it.
		if n := c.nextEach(contracts.FrameAnswer, contracts.FrameNotification)[contracts.FrameNotification]; n.Notification.Kind != "import_completed" {
			t.Fatalf("import of %s: %+v", file, n.Notification)
		}
	}
	summary := func() testSummary {
		t.Helper()
		var sum testSummary
		if status, raw := getLedger(t, info, lena, "/v1/ledger/summary?from=2026-10-01&to=2026-11-30", &sum); status != 200 {
			t.Fatalf("summary = %d %s", status, raw)
		}
		return sum
	}
	check := func(when string, count int, spent int64) {
		t.Helper()
		sum := summary()
		if sum.Count != count || !cmp.Equal(sum.Spending, []testMoney{{Minor: spent, Currency: "GBP"}}) || !cmp.Equal(sum.Income, []testMoney{{Minor: 252500, Currency: "GBP"}}) {
			t.Fatalf("%s: %d entries, spending %v, income %v; want %d, %d GBP minor, 252500 GBP minor", when, sum.Count, sum.Spending, sum.Income, count, spent)
		}
	}

	// The CSVs name no currency: Lena's is pounds.
	if p := say("my currency is GBP"); p.Proposal == nil {
		t.Fatalf("setting the currency: %s", describeFrame(p))
	} else {
		approve(p)
	}
	if p := say("add £4.50 Costa coffee on 2026-11-02"); p.Proposal == nil {
		t.Fatalf("typing the coffee: %s", describeFrame(p))
	} else {
		approve(p)
	}
	// Statements arrive one by one; each is the newest when it is asked for.
	deliver(1, "NatWest statement October MT940", "current-2026-10.sta", "application/octet-stream")
	importing("find my NatWest statement and import it", "current-2026-10.sta")
	// The same month as a CSV export: its lines are all held already.
	deliver(2, "NatWest export October spreadsheet", "current-2026-10.csv", "text/csv")
	if a := say("find my NatWest statement and import it"); a.Answer == nil || !strings.Contains(a.Answer.Content, "Nothing new in current-2026-10.csv") ||
		!strings.Contains(a.Answer.Content, "all 30 transactions") {
		t.Fatalf("October as CSV after the MT940: %s, want nothing new and no proposal", describeFrame(a))
	}
	deliver(3, "NatWest export recent weeks", "current-2026-10-25-to-11-05.csv", "text/csv")
	importing("find my NatWest statement and import it", "current-2026-10-25-to-11-05.csv")
	// October's 30 lines (2,296.64 out, 2,525.00 in) and November's 4
	// (12.99, 4.50, 12.00, 9.99); the typed coffee is its bank line.
	check("after three statements", 34, 229664+1299+450+1200+999)
	if a := say("what did I spend in October?"); a.Answer == nil || !strings.Contains(a.Answer.Content, "2,296.64") {
		t.Errorf("October in chat: %s, want 2,296.64", describeFrame(a))
	}
	if a := say("how much did I spend at Tesco in November?"); a.Answer == nil || !strings.Contains(a.Answer.Content, "£12.99") {
		t.Errorf("Tesco in November in chat: %s, want £12.99", describeFrame(a))
	}
	// November's list holds what was typed and what was imported.
	if a := say("list my transactions in November 2026"); a.Answer == nil || !strings.Contains(a.Answer.Content, "Netflix") ||
		!strings.Contains(a.Answer.Content, "costa coffee, -£4.50 (other) · expense #") {
		t.Errorf("November's list in chat: %s, want the imported Netflix line and the typed coffee", describeFrame(a))
	}

	if err := os.Remove(filepath.Join(mail, "02.eml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(mail, "03.eml")); err != nil {
		t.Fatal(err)
	}
	if a := say("find my NatWest statement and import it"); a.Answer == nil || !strings.Contains(a.Answer.Content, "Nothing new") || !strings.Contains(a.Answer.Content, "all 30 transactions") {
		t.Fatalf("the MT940 again: %s, want nothing new and no proposal", describeFrame(a))
	}
	check("after the MT940 again", 34, 229664+1299+450+1200+999)

	p := say("undo the last import")
	if p.Proposal == nil || !strings.Contains(p.Proposal.Summary, "current-2026-10-25-to-11-05.csv") || !strings.Contains(p.Proposal.Summary, "4 transactions") {
		t.Fatalf("undo the last import: %s, want a proposal naming the recent export's 4 transactions", describeFrame(p))
	}
	approve(p)
	// October as before, and the coffee typed by hand counts again now
	// that its bank line is gone.
	check("after the undo", 31, 229664+450)

	if a := say("delete expense 99999"); a.Answer == nil || !strings.Contains(a.Answer.Content, "99999") {
		t.Fatalf("delete expense 99999: %s, want an answer at once and no proposal", describeFrame(a))
	}
}

func describeFrame(f contracts.ServerFrame) string {
	switch {
	case f.Proposal != nil:
		return "proposal " + f.Proposal.Summary
	case f.Answer != nil:
		return "answer " + f.Answer.Content
	case f.Clarify != nil:
		return "question " + f.Clarify.Question
	case f.Error != nil:
		return "error " + f.Error.Code + ": " + f.Error.Message
	}
	return f.Type
}
