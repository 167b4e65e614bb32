package orchestrator

import (
	"sync"

	"github.com/purser-ai/purser/internal/store"
)

// stateCache keeps the state this process last saved for each
// conversation, with the version it was saved at and the user's settings
// it was saved with, so that the next event of the conversation does not
// read and decode the state again: decoding it was a quarter to a third
// of loading a conversation, itself 6-8% of purser's CPU at 1,000 bench
// users. An event within a turn takes the copy unread: its save is made
// at the kept version, so a stale copy fails it with store.ErrConflict,
// and the event is applied again from a read (see apply). An event that
// starts a turn takes it unread too while the store can say that the
// user's settings kept with it are still theirs (SQLite, owned by one
// process: Store.SettingsEpoch); otherwise, and on Postgres, it reads the
// stored version and the user's settings, and takes the copy only while
// the version is the one it was saved at. A save by another replica or
// another path makes the copy stale, and the state is read as before.
//
// A load takes the entry out, and only a save that succeeded puts one
// back: a state an event changed in place and then failed to store is
// never seen by the next event.
type stateCache struct {
	mu  sync.Mutex
	max int
	m   map[convRef]cachedState
}

type cachedState struct {
	conv     store.Conversation // names and version only (savedAs)
	settings store.UserSettings
	epoch    settingsEpoch // of settings, taken before they were read
	state    State
}

// stateCacheSize bounds the conversations remembered; past it, another
// is forgotten for each one saved.
const stateCacheSize = 2048

func newStateCache(max int) *stateCache {
	return &stateCache{max: max, m: map[convRef]cachedState{}}
}

// take removes and returns the state kept for key, if any.
func (c *stateCache) take(key convRef) (cachedState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[key]
	if ok {
		delete(c.m, key)
	}
	return s, ok
}

// put keeps s for key. Its state is kept as saved, not copied:
// nothing changes a state in place once it is built (Transition works on
// a copy of the state it is given, admit replaces the turn it clears), so
// the state kept may be shared with a model call still reading it. When
// full, an arbitrary other conversation is forgotten.
func (c *stateCache) put(key convRef, s cachedState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = s
}
