package store

import (
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A page split that swaps two pages' numbers through the spare number
// leaves the page cache's highest number where it was before the swap,
// so the commit's truncation need not walk the writer's whole cache.
// This drives pcache1 through the methods SQLite uses, as balance_nonroot
// does: A to the spare number, B to A, the spare number to B.
func TestAPageSwapLeavesTheCachesHighestPageNumber(t *testing.T) {
	if pcacheMethods == 0 {
		t.Fatal("pcache1's rekey is not wrapped: SQLite was initialised before the store package was")
	}
	tls := libc.NewTLS()
	defer tls.Close()
	if rc := sqlite3.Xsqlite3_initialize(tls); rc != sqlite3.SQLITE_OK {
		t.Fatalf("sqlite3_initialize: %d", rc)
	}
	m := cMem[sqlite3.Tsqlite3_pcache_methods2](pcacheMethods)
	create := goFunc[func(*libc.TLS, int32, int32, int32) uintptr](m.FxCreate)
	fetch := goFunc[func(*libc.TLS, uintptr, uint32, int32) uintptr](m.FxFetch)
	rekey := goFunc[func(*libc.TLS, uintptr, uintptr, uint32, uint32)](m.FxRekey)
	truncate := goFunc[func(*libc.TLS, uintptr, uint32)](m.FxTruncate)
	destroy := goFunc[func(*libc.TLS, uintptr)](m.FxDestroy)

	const pageSize = sqlitePageSize
	cache := create(tls, pageSize, 128, 1)
	if cache == 0 {
		t.Fatal("pcache1 made no cache")
	}
	defer destroy(tls, cache)
	pages := map[uint32]uintptr{}
	for key := uint32(1); key <= 40; key++ {
		if pages[key] = fetch(tls, cache, key, 2); pages[key] == 0 {
			t.Fatalf("page %d not made", key)
		}
	}
	c := cMem[sqlite3.TPCache1](cache)
	if c.FiMaxKey != 40 {
		t.Fatalf("highest page number %d after fetching 1 to 40", c.FiMaxKey)
	}

	spare := uint32(pendingByte/pageSize) + 1
	rekey(tls, cache, pages[30], 30, spare)
	if c.FiMaxKey != spare {
		t.Fatalf("highest page number %d while page 30 is filed under the spare number %d", c.FiMaxKey, spare)
	}
	rekey(tls, cache, pages[12], 12, 30)
	rekey(tls, cache, pages[30], spare, 12)
	if c.FiMaxKey != 40 {
		t.Errorf("highest page number %d after the swap, want 40 (the spare number %d was left)", c.FiMaxKey, spare)
	}
	if got := fetch(tls, cache, 12, 0); got != pages[30] {
		t.Errorf("page 12 is not the page that was 30")
	}
	if got := fetch(tls, cache, 30, 0); got != pages[12] {
		t.Errorf("page 30 is not the page that was 12")
	}

	// Truncation still drops what lies past its limit.
	truncate(tls, cache, 21)
	if got := fetch(tls, cache, 30, 0); got != 0 {
		t.Errorf("page 30 still cached after truncating to 20 pages")
	}
	if got := fetch(tls, cache, 12, 0); got != pages[30] {
		t.Errorf("page 12 lost by truncating to 20 pages")
	}
}
