package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// crashChild names, in a child test process, the database file it writes
// to until it is killed.
const crashChild = "PURSER_STORE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChild); path != "" {
		writeUntilKilled(path, os.Getenv(crashChild+"_ROUND"))
		return
	}
	os.Exit(m.Run())
}

// writeUntilKilled adds expenses one commit at a time, reading them back
// and checkpointing now and then, and prints the number of each commit
// once it returned.
func writeUntilKilled(path, round string) {
	ctx := context.Background()
	st, err := Open(ctx, "sqlite:"+path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	for i := 1; ; i++ {
		err := st.InTx(ctx, func(tx *Store) error {
			for j := range 5 {
				if _, err := tx.AddExpense(ctx, Expense{TenantID: "t", UserID: "u", Item: fmt.Sprintf("lunch %s %d-%d", round, i, j),
					AmountMinor: 1200, Currency: "EUR", Date: "2026-11-03"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			fmt.Println("write:", err)
			os.Exit(2)
		}
		fmt.Println(i)
		if i%50 == 0 {
			if _, err := st.ListExpenses(ctx, ExpenseFilter{TenantID: "t", UserID: "u", Limit: 10}); err != nil {
				fmt.Println("read:", err)
				os.Exit(2)
			}
			if _, _, err := walCheckpoint(ctx, st.db, "PASSIVE"); err != nil {
				fmt.Println("checkpoint:", err)
				os.Exit(2)
			}
		}
	}
}

// A process killed while it writes through purser's VFS leaves a database
// that is whole and holds every commit that returned before the kill.
func TestAStoreKilledWhileWritingKeepsEveryCommitThatReturned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "purser.db")
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChild+"="+path, fmt.Sprintf("%s_ROUND=%d", crashChild, round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		last, deadline := 0, time.Now().Add(time.Duration(300+200*round)*time.Millisecond)
		for time.Now().Before(deadline) && lines.Scan() {
			n, err := strconv.Atoi(lines.Text())
			if err != nil {
				cmd.Process.Kill()
				t.Fatalf("the writer said %q", lines.Text())
			}
			last = n
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if last == 0 {
			t.Fatal("the writer committed nothing before it was killed")
		}

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		st, err := Open(ctx, "sqlite:"+path)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		var check string
		if err := st.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Errorf("round %d: integrity_check: %q, %v", round, check, err)
		}
		got, err := st.ListExpenses(ctx, ExpenseFilter{TenantID: "t", UserID: "u", Limit: 1000000})
		st.Close()
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, e := range got {
			have[e.Item] = true
		}
		for i := 1; i <= last; i++ {
			for j := range 5 {
				if !have[fmt.Sprintf("lunch %d %d-%d", round, i, j)] {
					t.Fatalf("round %d: commit %d returned before the kill and is not in the database", round, i)
				}
			}
		}
		t.Logf("round %d: %d commits returned before the kill, all kept", round, last)
	}
}
