package store

import (
	"sync"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's page cache (pcache1) keeps the highest page number it holds,
// so that a commit's truncation to the database's size can skip its walk
// when no page lies past that size. A page split that has to swap two
// pages' numbers files one of them for a moment under the page after the
// lock byte (page 1,048,577 of 1-KiB pages), and the highest number then
// stays there: the commit's truncation walks every page of the writer's
// cache, 15,000 pages, for nothing. In a CPU profile of purser bench --up
// that walk was 2.2% of purser's CPU.
//
// keepMaxKey wraps pcache1's rekey so that the highest number goes back
// to what it was once the swap is over. A swap is three rekeys in a row
// on one cache: A to the spare number, B to A, the spare number to B. No
// page keeps the spare number afterwards and no other number was added,
// so the highest number before the swap is the highest after it.

// pcacheMethods is the page cache in use (pcache1, with rekey wrapped),
// in C memory for as long as the process lives; 0 when it could not be
// installed (SQLite was initialised before this package, or memory ran
// out), in which case pcache1 runs as it is.
var pcacheMethods uintptr

// pcache1Rekey is pcache1's own xRekey.
var pcache1Rekey uintptr

// swaps holds, for each cache in the middle of a swap, its highest page
// number before the swap began.
var swaps struct {
	sync.Mutex
	before map[uintptr]uint32
}

// pendingByte is the offset of SQLite's lock byte, whose page a database
// never uses (sqlite3PendingByte).
const pendingByte = 0x40000000

func keepMaxKey() {
	tls := libc.NewTLS()
	defer tls.Close()
	methods := libc.Xcalloc(tls, 1, types.Size_t(unsafe.Sizeof(sqlite3.Tsqlite3_pcache_methods2{})))
	va := libc.Xmalloc(tls, types.Size_t(unsafe.Sizeof(uintptr(0))))
	if methods == 0 || va == 0 {
		libc.Xfree(tls, methods)
		libc.Xfree(tls, va)
		return
	}
	defer libc.Xfree(tls, va)
	if sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_GETPCACHE2, libc.VaList(va, methods)) != sqlite3.SQLITE_OK {
		libc.Xfree(tls, methods)
		return
	}
	m := cMem[sqlite3.Tsqlite3_pcache_methods2](methods)
	pcache1Rekey = m.FxRekey
	m.FxRekey = cFunc(rekeyKeepingMaxKey)
	if sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PCACHE2, libc.VaList(va, methods)) != sqlite3.SQLITE_OK {
		libc.Xfree(tls, methods)
		return
	}
	swaps.before = make(map[uintptr]uint32)
	pcacheMethods = methods
}

// rekeyKeepingMaxKey is pcache1's xRekey, putting the cache's highest
// page number back at the end of a swap through the spare number.
func rekeyKeepingMaxKey(tls *libc.TLS, p, page uintptr, oldKey, newKey uint32) {
	c := cMem[sqlite3.TPCache1](p)
	spare := uint32(pendingByte/int64(c.FszPage)) + 1
	if newKey == spare {
		swaps.Lock()
		swaps.before[p] = c.FiMaxKey
		swaps.Unlock()
	}
	goFunc[func(*libc.TLS, uintptr, uintptr, uint32, uint32)](pcache1Rekey)(tls, p, page, oldKey, newKey)
	if oldKey != spare {
		return
	}
	swaps.Lock()
	before, ok := swaps.before[p]
	delete(swaps.before, p)
	swaps.Unlock()
	if ok {
		c.FiMaxKey = max(before, newKey)
	}
}
