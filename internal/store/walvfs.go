package store

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// walVFS names a SQLite VFS that is the system's own ("unix") except that
// the log's writes are gathered: SQLite writes each frame of a commit
// with two system calls (its 24-byte header, then its page), and with
// 1-KiB pages a turn's commit share is about 26 frames, 52 calls. In a
// CPU profile of `purser bench --up` those writes were 74 µs a turn, the
// largest share of the system calls purser makes. Here a write that
// carries on where the previous one ended is copied into a buffer, and
// the buffer goes to the file in one call before anything that could
// see the file: a sync, a read, a size, a truncation, a file control, a
// close, or a write elsewhere in the file.
//
// That is safe only because every commit of the writer syncs the log
// before SQLite publishes its frames to readers in the shared-memory
// index (synchronous FULL, which the writer's connection sets): the sync
// writes the buffer first, so nothing a reader can be told of is still
// here. With synchronous NORMAL a commit makes no call on the log between
// its frames and that index, and readers would read frames not yet
// written. Only the writer's connection uses this VFS.
const walVFS = "purser-wal"

// walFileHead is what this VFS puts before the system's file object in
// the memory SQLite gives a file: the sqlite3_file's methods pointer, and
// a word kept for alignment.
const walFileHead = 16

// walBufSize bounds what one write to the log gathers: 62 frames of
// 1-KiB pages. The system's VFS writes at most 128 KiB in one call (it
// keeps only the low 17 bits of a write's length).
const walBufSize = 64 << 10

// walFile is one open log of this VFS.
type walFile struct {
	inner   uintptr // the system's file object, walFileHead into SQLite's
	methods *sqlite3.Tsqlite3_io_methods
	buf     uintptr // walBufSize bytes of C memory
	off     int64   // where buf's first byte goes in the file
	n       int     // bytes gathered
}

// walCalls counts the log's writes as SQLite made them and as they went
// to the system.
var walCalls struct{ gathered, written atomic.Int64 }

var walFiles struct {
	sync.Mutex
	open map[uintptr]*walFile // by SQLite's file object
}

var (
	baseVFS   *sqlite3.Tsqlite3_vfs // the system's own
	walIO     uintptr               // the io methods of this VFS's logs
	walVFSErr bool                  // the VFS could not be registered
)

// registerWALVFS registers walVFS; it runs once, after keepMaxKey (which
// must come before SQLite initialises).
func registerWALVFS() {
	tls := libc.NewTLS()
	defer tls.Close()
	base := sqlite3.Xsqlite3_vfs_find(tls, 0)
	vfs := libc.Xcalloc(tls, 1, types.Size_t(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	io := libc.Xcalloc(tls, 1, types.Size_t(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
	name, err := libc.CString(walVFS)
	if base == 0 || vfs == 0 || io == 0 || err != nil {
		walVFSErr = true
		return
	}
	baseVFS = cMem[sqlite3.Tsqlite3_vfs](base)
	v := cMem[sqlite3.Tsqlite3_vfs](vfs)
	*v = *baseVFS
	v.FpNext = 0
	v.FzName = name
	v.FszOsFile = baseVFS.FszOsFile + walFileHead
	v.FxOpen = cFunc(walOpen)

	m := cMem[sqlite3.Tsqlite3_io_methods](io)
	m.FiVersion = 3
	m.FxClose = cFunc(walClose)
	m.FxRead = cFunc(walRead)
	m.FxWrite = cFunc(walWrite)
	m.FxTruncate = cFunc(walTruncate)
	m.FxSync = cFunc(walSync)
	m.FxFileSize = cFunc(walFileSize)
	m.FxLock = cFunc(walLock)
	m.FxUnlock = cFunc(walUnlock)
	m.FxCheckReservedLock = cFunc(walCheckReservedLock)
	m.FxFileControl = cFunc(walFileControl)
	m.FxSectorSize = cFunc(walSectorSize)
	m.FxDeviceCharacteristics = cFunc(walDeviceCharacteristics)
	m.FxShmMap = cFunc(walShmMap)
	m.FxShmLock = cFunc(walShmLock)
	m.FxShmBarrier = cFunc(walShmBarrier)
	m.FxShmUnmap = cFunc(walShmUnmap)
	m.FxFetch = cFunc(walFetch)
	m.FxUnfetch = cFunc(walUnfetch)
	walIO = io
	walFiles.open = make(map[uintptr]*walFile)
	if sqlite3.Xsqlite3_vfs_register(tls, vfs, 0) != sqlite3.SQLITE_OK {
		walVFSErr = true
	}
}

// cFunc is Go function f as a C function pointer SQLite can call.
func cFunc[F any](f F) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f F }{f})) }

// goFunc is C function pointer p as a Go function of type F.
func goFunc[F any](p uintptr) F { return *(*F)(unsafe.Pointer(&struct{ uintptr }{p})) }

// walOpen opens a file with the system's VFS; a log gets this VFS's
// methods around the system's.
func walOpen(tls *libc.TLS, vfs, name, file uintptr, flags int32, outFlags uintptr) int32 {
	open := goFunc[func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32](baseVFS.FxOpen)
	if flags&sqlite3.SQLITE_OPEN_WAL == 0 {
		return open(tls, vfs, name, file, flags, outFlags)
	}
	head := cMem[[2]uintptr](file)
	head[0], head[1] = 0, 0 // no methods: SQLite closes nothing if the open fails
	inner := file + walFileHead
	rc := open(tls, vfs, name, inner, flags, outFlags)
	methods := *cMem[uintptr](inner)
	if rc != sqlite3.SQLITE_OK || methods == 0 {
		return rc
	}
	buf := libc.Xmalloc(tls, walBufSize)
	if buf == 0 {
		goFunc[func(*libc.TLS, uintptr) int32](cMem[sqlite3.Tsqlite3_io_methods](methods).FxClose)(tls, inner)
		return sqlite3.SQLITE_NOMEM
	}
	walFiles.Lock()
	walFiles.open[file] = &walFile{inner: inner, methods: cMem[sqlite3.Tsqlite3_io_methods](methods), buf: buf}
	walFiles.Unlock()
	head[0] = walIO
	return sqlite3.SQLITE_OK
}

func walOf(file uintptr) *walFile {
	walFiles.Lock()
	f := walFiles.open[file]
	walFiles.Unlock()
	return f
}

// flush writes what f gathered.
func (f *walFile) flush(tls *libc.TLS) int32 {
	if f.n == 0 {
		return sqlite3.SQLITE_OK
	}
	n := f.n
	f.n = 0
	walCalls.written.Add(1)
	return goFunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.methods.FxWrite)(tls, f.inner, f.buf, int32(n), f.off)
}

func walWrite(tls *libc.TLS, file, data uintptr, amt int32, off int64) int32 {
	f := walOf(file)
	walCalls.gathered.Add(1)
	if f.n > 0 && (off != f.off+int64(f.n) || f.n+int(amt) > walBufSize) {
		if rc := f.flush(tls); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if int(amt) > walBufSize {
		walCalls.written.Add(1)
		return goFunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.methods.FxWrite)(tls, f.inner, data, amt, off)
	}
	if f.n == 0 {
		f.off = off
	}
	copy(unsafe.Slice(cMem[byte](f.buf+uintptr(f.n)), amt), unsafe.Slice(cMem[byte](data), amt))
	f.n += int(amt)
	return sqlite3.SQLITE_OK
}

func walClose(tls *libc.TLS, file uintptr) int32 {
	f := walOf(file)
	rc := f.flush(tls)
	if rc2 := goFunc[func(*libc.TLS, uintptr) int32](f.methods.FxClose)(tls, f.inner); rc == sqlite3.SQLITE_OK {
		rc = rc2
	}
	walFiles.Lock()
	delete(walFiles.open, file)
	walFiles.Unlock()
	libc.Xfree(tls, f.buf)
	return rc
}

func walRead(tls *libc.TLS, file, data uintptr, amt int32, off int64) int32 {
	f := walOf(file)
	if rc := f.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.methods.FxRead)(tls, f.inner, data, amt, off)
}

func walTruncate(tls *libc.TLS, file uintptr, size int64) int32 {
	f := walOf(file)
	if rc := f.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int64) int32](f.methods.FxTruncate)(tls, f.inner, size)
}

func walSync(tls *libc.TLS, file uintptr, flags int32) int32 {
	f := walOf(file)
	if rc := f.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxSync)(tls, f.inner, flags)
}

func walFileSize(tls *libc.TLS, file, size uintptr) int32 {
	f := walOf(file)
	if rc := f.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, uintptr) int32](f.methods.FxFileSize)(tls, f.inner, size)
}

func walFileControl(tls *libc.TLS, file uintptr, op int32, arg uintptr) int32 {
	f := walOf(file)
	if rc := f.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int32, uintptr) int32](f.methods.FxFileControl)(tls, f.inner, op, arg)
}

func walFetch(tls *libc.TLS, file uintptr, off int64, amt int32, pp uintptr) int32 {
	f := walOf(file)
	if rc := f.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int64, int32, uintptr) int32](f.methods.FxFetch)(tls, f.inner, off, amt, pp)
}

func walUnfetch(tls *libc.TLS, file uintptr, off int64, p uintptr) int32 {
	f := walOf(file)
	return goFunc[func(*libc.TLS, uintptr, int64, uintptr) int32](f.methods.FxUnfetch)(tls, f.inner, off, p)
}

func walLock(tls *libc.TLS, file uintptr, lock int32) int32 {
	f := walOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxLock)(tls, f.inner, lock)
}

func walUnlock(tls *libc.TLS, file uintptr, lock int32) int32 {
	f := walOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxUnlock)(tls, f.inner, lock)
}

func walCheckReservedLock(tls *libc.TLS, file, out uintptr) int32 {
	f := walOf(file)
	return goFunc[func(*libc.TLS, uintptr, uintptr) int32](f.methods.FxCheckReservedLock)(tls, f.inner, out)
}

func walSectorSize(tls *libc.TLS, file uintptr) int32 {
	f := walOf(file)
	return goFunc[func(*libc.TLS, uintptr) int32](f.methods.FxSectorSize)(tls, f.inner)
}

func walDeviceCharacteristics(tls *libc.TLS, file uintptr) int32 {
	f := walOf(file)
	return goFunc[func(*libc.TLS, uintptr) int32](f.methods.FxDeviceCharacteristics)(tls, f.inner)
}

func walShmMap(tls *libc.TLS, file uintptr, region, size, extend int32, pp uintptr) int32 {
	f := walOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32, int32, int32, uintptr) int32](f.methods.FxShmMap)(tls, f.inner, region, size, extend, pp)
}

func walShmLock(tls *libc.TLS, file uintptr, off, n, flags int32) int32 {
	f := walOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32, int32, int32) int32](f.methods.FxShmLock)(tls, f.inner, off, n, flags)
}

func walShmBarrier(tls *libc.TLS, file uintptr) {
	f := walOf(file)
	goFunc[func(*libc.TLS, uintptr)](f.methods.FxShmBarrier)(tls, f.inner)
}

func walShmUnmap(tls *libc.TLS, file uintptr, deleteFlag int32) int32 {
	f := walOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxShmUnmap)(tls, f.inner, deleteFlag)
}
