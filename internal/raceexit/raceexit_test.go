package raceexit

import (
	"os"
	"testing"
)

// The workers' GORACE skips the pause at exit and keeps what the person
// set, whose own atexit_sleep_ms comes later and so wins.
func TestNoSleepKeepsThePersonsOptions(t *testing.T) {
	t.Setenv("GORACE", "halt_on_error=1 atexit_sleep_ms=500")
	NoSleep()
	if got, want := os.Getenv("GORACE"), "atexit_sleep_ms=0 halt_on_error=1 atexit_sleep_ms=500"; got != want {
		t.Errorf("GORACE = %q, want %q", got, want)
	}
}
