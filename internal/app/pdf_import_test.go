package app

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner/mailbox"
)

// A bank's PDF statement e-mailed to the user goes through purser up as
// any other: found, proposed, approved, parsed in the sandbox, and every
// transaction stored (the HSBC current account sample: 55 transactions,
// +129.40 GBP).
func TestPDFStatementImportEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := mailbox.WriteDemo(dir, DemoTenant, DemoUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	pdf, err := os.ReadFile("../../services/toolrunner/statements/testdata/samples/anonymised_HSBC_UK_CUR_12345678_20250808.pdf")
	if err != nil {
		t.Fatal(err)
	}
	eml := "From: HSBC UK <statements@hsbc.example>\r\nSubject: Your HSBC current account statement\r\nDate: " + time.Now().Add(-time.Hour).Format(time.RFC1123Z) +
		"\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nYour statement is attached.\r\n" +
		"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"hsbc_august.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString(pdf) + "\r\n--b--\r\n"
	if err := os.WriteFile(filepath.Join(dir, DemoTenant, DemoUser, "98-hsbc.eml"), []byte(eml), 0o600); err != nil {
		t.Fatal(err)
	}
	var dsn string
	info := startUp(t, func(c *config.Config) { c.MailboxDir = dir; dsn = DSN(*c) })
	c := dial(t, info, info.DemoToken)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"Find my HSBC statement and process it"}`)
	p := c.next(contracts.FrameProposal)
	// Before the yes, the proposal says what the import would store.
	for _, want := range []string{"hsbc_august.pdf: 55 transactions", "dated 2025-07-09 to 2025-08-08", "in GBP", "net 129.40 GBP"} {
		if !strings.Contains(p.Proposal.Summary, want) {
			t.Errorf("proposal %q does not say %q", p.Proposal.Summary, want)
		}
	}
	c.send(`{"type":"confirm","id":"m1y","conversation_id":"c1","proposal_id":"` + p.Proposal.ProposalID + `","decision":"approve"}`)
	n := c.nextEach(contracts.FrameAnswer, contracts.FrameNotification)[contracts.FrameNotification]
	if n.Notification.Kind != "import_completed" || !strings.HasPrefix(n.Notification.Title, "Imported 55 transactions from hsbc_august.pdf") {
		t.Fatalf("notification = %+v", n.Notification)
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	txs, err := st.ListTransactions(context.Background(), store.TransactionFilter{TenantID: DemoTenant, UserID: DemoUser, From: "2025-07-09", To: "2025-08-08"})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, tx := range txs {
		if tx.Currency != "GBP" {
			t.Errorf("transaction in %s: %+v", tx.Currency, tx)
		}
		sum += tx.AmountMinor
	}
	if len(txs) != 55 || sum != 12940 {
		t.Fatalf("stored %d transactions summing %d minor units, want 55 and 12940", len(txs), sum)
	}
}
