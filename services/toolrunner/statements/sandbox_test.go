package statements

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/raceexit"
)

const workerEnv = "PURSER_STATEMENTS_WORKER"

// hookEnv names the hostile parser the worker plays in place of the real
// one (see hostileParser). Only this test binary reads it: purser's
// worker always parses.
const hookEnv = "PURSER_STATEMENTS_TEST_HOOK"

// TestMain turns the test binary into the sandbox's worker when asked,
// the way purser runs "purser import-worker", with the parser named by
// hookEnv.
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		if err := serveWorker(os.Stdin, os.Stdout, hostileParser(os.Getenv(hookEnv))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	raceexit.NoSleep()
	os.Exit(m.Run())
}

// hostileParser is the parser the worker runs for hook, once confined and
// limited: "spin" burns CPU forever, "alloc" allocates without bound,
// "crash" exits at once, "escape" reports what a parser could reach
// (escapeAttempts); "" is the real parser.
func hostileParser(hook string) func(request) reply {
	switch hook {
	case "spin":
		return func(request) reply {
			for i := 0; ; i++ {
				_ = strconv.Itoa(i)
			}
		}
	case "alloc":
		return func(request) reply {
			var hog [][]byte
			for {
				b := make([]byte, 64<<20)
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1 // touch every page
				}
				hog = append(hog, b)
			}
		}
	case "crash":
		return func(request) reply {
			os.Exit(3)
			return reply{}
		}
	case "escape":
		return func(request) reply {
			return reply{Error: escapeAttempts(os.Getenv(hookEnv+"_PATH"), os.Getenv(hookEnv+"_ADDR"))}
		}
	}
	return parseRequest
}

// escapeAttempts is what a hostile parser would try after confinement,
// each reported as "open" or "denied".
func escapeAttempts(path, addr string) string {
	var out []string
	try := func(what string, err error) {
		if err == nil {
			out = append(out, what+"=open")
		} else {
			out = append(out, what+"=denied")
		}
	}
	_, err := os.ReadFile("/etc/passwd")
	try("passwd", err)
	_, err = os.ReadFile(path)
	try("file", err)
	f, err := os.Create(path + ".new")
	if err == nil {
		f.Close()
	}
	try("create", err)
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
	}
	try("tcp", err)
	u, err := net.Dial("udp", "127.0.0.1:53")
	if err == nil {
		u.Close()
	}
	try("udp", err)
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.Close(fd)
	}
	try("socket", err)
	return strings.Join(out, " ")
}

func sandbox(hook string) *Sandbox {
	env := []string{workerEnv + "=1"}
	if hook != "" {
		env = append(env, hookEnv+"="+hook)
	}
	return &Sandbox{Command: []string{os.Args[0]}, Env: env, MaxInput: 1 << 20, CPU: time.Second, Memory: 256 << 20, Wall: 20 * time.Second,
		Options: Options{DefaultCurrency: "GBP"}}
}

func sample(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSandboxParsesLikeInProcess(t *testing.T) {
	data := sample(t, "suntrust_debit_credit.csv")
	got, err := sandbox("").Parse(context.Background(), "suntrust.csv", data)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Parse("suntrust.csv", data, Options{DefaultCurrency: "GBP"})
	if len(got.Transactions) != 7 || got.Transactions[6] != want.Transactions[6] {
		t.Fatalf("sandbox %+v\nin-process %+v", got.Transactions, want.Transactions)
	}
}

// Hostile files are stopped by the limits and reported as failed imports
// a person can understand; the sandbox keeps working after each.
func TestSandboxStopsHostileFiles(t *testing.T) {
	good := sample(t, "generic_checking_v102.ofx")
	tests := []struct {
		name, hook string
		data       []byte
		want       string
	}{
		{"huge", "", []byte(strings.Repeat("x", 2<<20)), "larger than 1 MiB"},
		{"endless", "spin", good, "took too long"},
		{"hungry", "alloc", good, "memory"},
		{"crashing", "crash", good, "could not be read"},
		{"malformed", "", []byte("OFXHEADER:100\n<OFX><STMTTRN><TRNAMT>1</OFX>"), "not a statement we can read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sandbox(tt.hook).Parse(context.Background(), tt.name, tt.data)
			var f *Failure
			if !errors.As(err, &f) || !strings.Contains(f.Reason, tt.want) {
				t.Fatalf("err = %v, want a failure saying %q", err, tt.want)
			}
			r, err := sandbox("").Parse(context.Background(), "good.ofx", good)
			if err != nil || len(r.Transactions) != 3 {
				t.Fatalf("after %s the sandbox fails a good file: %v", tt.name, err)
			}
		})
	}
}

func TestSandboxWallClock(t *testing.T) {
	s := sandbox("spin")
	s.CPU = time.Hour // only the wall clock can stop it
	s.Wall = 500 * time.Millisecond
	_, err := s.Parse(context.Background(), "slow.csv", []byte("x"))
	var f *Failure
	if !errors.As(err, &f) || !strings.Contains(f.Reason, "took too long") {
		t.Fatalf("err = %v", err)
	}
}

// statement10k is a 10,000-row CSV statement.
func statement10k() []byte {
	var b strings.Builder
	b.WriteString("Date,Description,Amount,Balance\n")
	bal := int64(1_000_000)
	for i := range 10_000 {
		amt := -int64(100 + i%5000)
		if i%30 == 0 {
			amt = 250_000
		}
		bal += amt
		fmt.Fprintf(&b, "2026-%02d-%02d,CARD PAYMENT TO SHOP %d LONDON,%d.%02d,%d.%02d\n", 1+i%12, 1+i%28, i%97, amt/100, abs(amt%100), bal/100, abs(bal%100))
	}
	return []byte(b.String())
}

// BenchmarkParseCSV10k reports import parsing throughput for a
// 10,000-row statement, in process and through the sandbox.
func BenchmarkParseCSV10k(b *testing.B) {
	data := statement10k()
	b.Run("in-process", func(b *testing.B) {
		for range b.N {
			r, err := Parse("big.csv", data, Options{})
			if err != nil || len(r.Transactions) != 10_000 {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(10_000*b.N)/b.Elapsed().Seconds(), "txns/s")
	})
	b.Run("sandbox", func(b *testing.B) {
		s := sandbox("")
		s.MaxInput = 10 << 20
		for range b.N {
			r, err := s.Parse(context.Background(), "big.csv", data)
			if err != nil || len(r.Transactions) != 10_000 {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(10_000*b.N)/b.Elapsed().Seconds(), "txns/s")
	})
}

// The worker cannot read or write files, nor open any socket, once
// confined: it answers with what each attempt gave.
func TestSandboxConfinesTheParser(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("not for the parser"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := sandbox("escape")
	s.Env = append(s.Env, hookEnv+"_PATH="+secret, hookEnv+"_ADDR="+ln.Addr().String())
	_, err = s.Parse(context.Background(), "x.csv", []byte("x"))
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v", err)
	}
	want := "passwd=denied file=denied create=denied tcp=denied udp=denied socket=denied"
	if f.Reason != want {
		t.Fatalf("the confined parser got %q, want %q", f.Reason, want)
	}
	// And the same checks pass outside, so the test sees the difference.
	if _, err := os.ReadFile(secret); err != nil {
		t.Fatal(err)
	}
}

// The document path runs in the same worker under the same limits: a
// hostile file sent to it is stopped and told as a failed import, and
// the sandbox reads a receipt after each.
func TestSandboxDocumentPath(t *testing.T) {
	receipt := receiptPDF(emailedReceipt)
	d, err := sandbox("").ReadDocument(context.Background(), "scan.pdf", receipt, ReceiptOptions{})
	if err != nil || d.Kind != KindReceipt || d.Receipt.Total != "34.89" || d.Receipt.Currency != "EUR" {
		t.Fatalf("%+v, %v", d, err)
	}
	tests := []struct {
		name, hook string
		data       []byte
		want       string
	}{
		{"huge", "", []byte("%PDF-1.4\n" + strings.Repeat("x", 2<<20)), "larger than 1 MiB"},
		{"endless", "spin", receipt, "took too long"},
		{"hungry", "alloc", receipt, "memory"},
		{"crashing", "crash", receipt, "could not be read"},
		{"malformed", "", []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >>"), "not a statement we can read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sandbox(tt.hook).ReadDocument(context.Background(), tt.name, tt.data, ReceiptOptions{})
			var f *Failure
			if !errors.As(err, &f) || !strings.Contains(f.Reason, tt.want) {
				t.Fatalf("err = %v, want a failure saying %q", err, tt.want)
			}
			d, err := sandbox("").ReadDocument(context.Background(), "good.pdf", receipt, ReceiptOptions{})
			if err != nil || d.Receipt == nil || d.Receipt.Total != "34.89" {
				t.Fatalf("after %s the sandbox fails a good receipt: %+v %v", tt.name, d, err)
			}
		})
	}
}

// A request from before documents (no kind) is still a statement, and a
// kind the worker does not know is refused in words.
func TestWorkerRequestKinds(t *testing.T) {
	data := sample(t, "generic_checking_v102.ofx")
	if rep := parseRequest(request{Name: "x.ofx", Data: data}); rep.Result == nil || len(rep.Result.Transactions) != 3 {
		t.Fatalf("%+v", rep)
	}
	if rep := parseRequest(request{Kind: "picture", Name: "x.ofx", Data: data}); rep.Error == "" || rep.Result != nil {
		t.Fatalf("%+v", rep)
	}
	rep := parseRequest(request{Kind: requestDocument, Name: "x.ofx", Data: data})
	if rep.Document == nil || rep.Document.Kind != KindStatement || len(rep.Document.Statement.Transactions) != 3 {
		t.Fatalf("%+v", rep)
	}
}
