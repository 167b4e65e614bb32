package warm

import (
	"testing"
	"time"
)

// A job never waits for one that is still running: with a job blocked,
// the next one runs.
func TestAJobNeverWaitsForAnother(t *testing.T) {
	release, ran := make(chan struct{}), make(chan struct{})
	Go(func() { <-release })
	defer close(release)
	Go(func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("a job waited for a blocked one")
	}
}

// A job that comes while a worker waits runs on that worker: jobs run one
// after another start no goroutine after the first.
func TestAWaitingWorkerTakesTheNextJob(t *testing.T) {
	done := make(chan struct{})
	Go(func() { done <- struct{}{} })
	<-done
	before := started.Load()
	for range 50 {
		waitForAWaitingWorker(t)
		Go(func() { done <- struct{}{} })
		<-done
	}
	if n := started.Load() - before; n != 0 {
		t.Errorf("50 jobs, each after the last had ended, started %d workers; want none", n)
	}
}

func waitForAWaitingWorker(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); waiting.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no worker waits for a job")
		}
	}
}
