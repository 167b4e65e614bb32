package store

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// settingsEpochs tell a SQLite store's caller whether a user's settings
// may have changed since it read them, without a read. SQLite is for one
// process (DATABASE_URL), and every write of that process goes through
// its one Store, so the store sees every change of a user's settings:
// PutUserSettings moves the user's epoch on before its write and again
// once its transaction has ended. A caller that takes the epoch before it
// reads the settings, and finds it unmoved later, holds settings that are
// still the stored ones.
//
// Users share epochs (a fixed table, hashed by user): a change moves the
// epoch of every user on its slot, which costs them a read, never a
// stale answer. On Postgres, where other processes write, there are none.
type settingsEpochs struct {
	seed  maphash.Seed
	slots [settingsEpochSlots]atomic.Uint64
}

const settingsEpochSlots = 4096

func newSettingsEpochs() *settingsEpochs {
	return &settingsEpochs{seed: maphash.MakeSeed()}
}

func (e *settingsEpochs) slot(tenantID, userID string) *atomic.Uint64 {
	var h maphash.Hash
	h.SetSeed(e.seed)
	h.WriteString(tenantID)
	h.WriteByte(0)
	h.WriteString(userID)
	return &e.slots[h.Sum64()%settingsEpochSlots]
}

// SettingsEpoch is the user's settings epoch and true on SQLite; 0 and
// false on Postgres, where it says nothing. Taken before a read of the
// user's settings (GetUserSettings, LoadConversationIfChanged) and equal
// again later, it says that the settings read are still the stored ones.
func (s *Store) SettingsEpoch(tenantID, userID string) (uint64, bool) {
	if s.epochs == nil {
		return 0, false
	}
	return s.epochs.slot(tenantID, userID).Load(), true
}

// settingsChanging moves the user's epoch on now, and again once the
// transaction s is in ends (committed or not: a move is never wrong), or
// at once if s is in none.
func (s *Store) settingsChanging(tenantID, userID string) {
	if s.epochs == nil {
		return
	}
	slot := s.epochs.slot(tenantID, userID)
	slot.Add(1)
	if s.ended != nil {
		s.ended.add(func() { slot.Add(1) })
	}
}

// txEnd holds what runs once a transaction has ended.
type txEnd struct {
	mu  sync.Mutex
	fns []func()
}

func (t *txEnd) add(fn func()) {
	t.mu.Lock()
	t.fns = append(t.fns, fn)
	t.mu.Unlock()
}

// run runs what was added, once; a nil t has nothing to run.
func (t *txEnd) run() {
	if t == nil {
		return
	}
	t.mu.Lock()
	fns := t.fns
	t.fns = nil
	t.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
