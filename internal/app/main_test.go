package app

import (
	"fmt"
	"os"
	"testing"

	"github.com/purser-ai/purser/internal/raceexit"
)

// TestMain lets the test binary be the toolrunner's import worker, as the
// purser binary is ("purser import-worker").
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ImportWorkerCommand {
		if err := ServeImportWorker(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	raceexit.NoSleep()
	os.Exit(m.Run())
}
