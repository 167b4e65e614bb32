package app

import (
	"fmt"
	"os"
	"testing"

	"github.com/purser-ai/purser/services/toolrunner/statements"
)

// TestMain lets the test binary be the toolrunner's import worker, as the
// purser binary is ("purser import-worker").
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "import-worker" {
		if err := statements.ServeWorker(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
