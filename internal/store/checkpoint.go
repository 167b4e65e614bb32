package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointer copies SQLite's write-ahead log back into the database file
// on a connection of its own, so that the one writer only appends to the
// log. Left to SQLite, the checkpoint runs inside the commit that crosses
// its threshold, and every write queued behind that commit waits for the
// copy and its fsync.
//
// A log that is fully copied starts again from its beginning only when a
// write transaction begins with nothing left to copy, and the writer keeps
// committing while the checkpointer copies. So once the log is long
// (restartFrames), the checkpointer asks the writer to copy the little that
// is left itself, between two batches: its next transaction then reuses the
// log from the start instead of growing it.
type checkpointer struct {
	db      *sql.DB // a connection of its own, never the writer's
	every   time.Duration
	restart atomic.Bool // set for the writer: copy the rest, then the log restarts
	long    atomic.Bool // set for the writer: the log has not restarted for long, wait for readers
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// Checkpoint settings, variables so that tests can make them small.
//
// A pass copies each page the log holds once, however often it was
// written since the last pass, and then syncs the file. Pages written many
// times a second (the ends of the frames, outbox and audit tables, the
// upper levels of every index, a busy conversation's row) were copied ten
// times a second with a pass every 100 ms, and once with a pass a second.
// A pass every 2 s wrote 6% less again at 1,000 offline users (45.4-46.4
// KB a turn against 48.3-51.5, five alternated pairs) and took less CPU
// (1.11-1.21 ms a turn against 1.18-1.33), with purser's part of a turn's
// first token unchanged at 300 users with a model (p50 4.0-4.6 ms against
// 4.3-5.6). A pass every 5 s wrote less still (37-39 KB a turn against
// 52-57 on 1-KiB pages), but with a model at 300 users on a slower
// machine purser's part of a turn's first token was worse in six pairs of
// nine (p50 median 70 ms against 40; docs/performance.md).
//
// Once a turn wrote about a quarter fewer pages (the sixth pass), a pass
// every 3 s wrote 29.3-30.9 KB a turn against 31.0-32.3 with the 2-s pass
// and took 1.81-1.97 ms of CPU against 2.02-2.12 (three alternated pairs
// at 1,000 users), with more turns served and a lower p99 (1.09-1.20 s
// against 1.23-1.44). With a model at 300 users, purser's part of the
// first token spread too widely between runs to tell the two apart (p50
// 13.8-42.3 ms against 8.9-25.9, four runs each; the code before the
// sixth pass 18.5 and 47.8).
var (
	checkpointEvery = 3 * time.Second
	// restartFrames is the log length (in pages) past which the writer is
	// asked to let the log restart: 16384 pages is 16 MiB at purser's page
	// size (64 MiB for a file made with 4-KiB pages before it). Even a
	// lightly used purser passes it, since the writer rarely begins with
	// the whole log copied, so the log's file stays about that long.
	restartFrames = 16384
)

// longFrames times restartFrames is the log length past which the writer
// waits for readers to restart it. At 1,000 offline users every 2-s pass
// found 85,000-97,000 pages (a build logging each pass, fifth pass), past
// 65,536, so under that load the writer restarted the log with a RESTART
// after every pass, and its p99 was no worse than with a pass a second
// (489-504 ms against 505-623). A turn now writes about 20 pages (a copy
// of the log, sixth pass), so a 3-s pass at 1,000 turns a second should
// find about 60,000; no build has logged its passes since.
const longFrames = 4

func newCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, every: checkpointEvery, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// run copies the log every c.every. A pass before the store's first
// connection has switched a new file to WAL finds no log and does nothing.
func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		log, copied, err := walCheckpoint(context.Background(), c.db, "PASSIVE")
		if err != nil || log < restartFrames {
			continue
		}
		// Ask the writer only right after a pass that copied the whole
		// log: what is left for it is what it committed meanwhile.
		if copied == log {
			c.restart.Store(true)
		}
		if log >= longFrames*restartFrames {
			c.restart.Store(true)
			c.long.Store(true)
		}
	}
}

// writerTurn is called by the writer between batches, on its connection.
// Once the log is long and the checkpointer has just copied all of it, the
// writer copies what it committed since (about one batch): its next
// transaction then finds the whole log copied and starts it again, unless
// a reader still reads from it; the checkpointer asks again after its next
// pass. Only a log that has kept growing past longFrames times that waits
// for its readers (a RESTART checkpoint): waiting every time stalled the
// writer for up to 0.15 s under load.
func (c *checkpointer) writerTurn(writer *sql.DB) {
	if c == nil || !c.restart.Swap(false) {
		return
	}
	mode := "PASSIVE"
	if c.long.Load() {
		mode = "RESTART"
	}
	log, _, err := walCheckpoint(context.Background(), writer, mode)
	// A RESTART that was not busy has started the log again (it reports
	// the length the log had).
	if err == nil && log >= 0 && (mode == "RESTART" || log < longFrames*restartFrames) {
		c.long.Store(false)
	}
}

func (c *checkpointer) close() {
	if c == nil {
		return
	}
	c.once.Do(func() { close(c.stop) })
	<-c.done
	c.db.Close()
}

// walCheckpoint runs a checkpoint (PASSIVE copies what it can without
// waiting for readers or the writer; RESTART waits for both, then starts
// the log again) and reports the log's length and how much of it is
// copied, in pages. A checkpoint already running elsewhere is not an
// error: SQLite reports it as busy, both as -1, and this one is skipped.
func walCheckpoint(ctx context.Context, db *sql.DB, mode string) (log, copied int, err error) {
	var busy int
	err = db.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &log, &copied)
	return log, copied, err
}
