package store

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// purserVFS names a SQLite VFS that is the system's own ("unix") but for
// two things, each measured in CPU profiles of `purser bench --up`.
//
// The log's writes are gathered. SQLite writes each frame of a commit
// with two system calls (its 24-byte header, then its page), and with
// 1-KiB pages a turn's share of commits is about 26 frames, 52 calls:
// 74 µs a turn, the largest share of the system calls purser made. Here
// a write that carries on where the previous one ended is copied into a
// buffer, and the buffer goes to the file in one call before anything
// that could see the file: a sync, a read, a size, a truncation, a file
// control, a close, or a write elsewhere in the file. That is safe only
// because every commit of the writer syncs the log before SQLite
// publishes its frames to readers in the shared-memory index
// (synchronous FULL, which the writer's connection sets): the sync writes
// the buffer first, so nothing a reader can be told of, and nothing a
// crash could lose, is still here. With synchronous NORMAL a commit makes
// no call on the log between its frames and that index.
//
// A reader keeps its map of the database file. A reader reads the file
// through a memory map (readerMmap), and SQLite drops the map at the
// start of every read that follows a commit, in case the file changed
// size: a munmap, then a page fault for each page touched again. At
// 1,000 bench users that is nearly every read (17 µs a turn of munmap
// alone). Here the map is dropped only when the file's size is no longer
// the map's; otherwise the map shows the file as it is, as a read would.
const purserVFS = "purser"

// vfsFileHead is what this VFS puts before the system's file object in
// the memory SQLite gives a file: the sqlite3_file's methods pointer, and
// a word kept for alignment.
const vfsFileHead = 16

// walBufSize bounds what one write to the log gathers: 62 frames of
// 1-KiB pages. The system's VFS writes at most 128 KiB in one call (it
// keeps only the low 17 bits of a write's length).
const walBufSize = 64 << 10

// vfsFile is a log or a database file this VFS opened.
type vfsFile struct {
	inner   uintptr // the system's file object, vfsFileHead into SQLite's
	methods *sqlite3.Tsqlite3_io_methods
	log     bool    // a log, whose writes are gathered
	buf     uintptr // walBufSize bytes of C memory, made at the log's first write
	off     int64   // where buf's first byte goes in the file
	n       int     // bytes gathered
}

// walCalls counts the log's writes as SQLite made them and as they went
// to the system.
var walCalls struct{ gathered, written atomic.Int64 }

// mapsKept counts the times a reader's map of the database was kept.
var mapsKept atomic.Int64

var vfsFiles struct {
	sync.Mutex
	open map[uintptr]*vfsFile // by SQLite's file object
}

var (
	baseVFS   *sqlite3.Tsqlite3_vfs // the system's own
	vfsIO     uintptr               // the io methods of this VFS's files
	vfsFailed bool                  // the VFS could not be registered
)

// registerVFS registers purserVFS; it runs once, after keepMaxKey (which
// must come before SQLite initialises).
func registerVFS() {
	tls := libc.NewTLS()
	defer tls.Close()
	base := sqlite3.Xsqlite3_vfs_find(tls, 0)
	vfs := libc.Xcalloc(tls, 1, types.Size_t(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	io := libc.Xcalloc(tls, 1, types.Size_t(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
	name, err := libc.CString(purserVFS)
	if base == 0 || vfs == 0 || io == 0 || err != nil {
		vfsFailed = true
		return
	}
	baseVFS = cMem[sqlite3.Tsqlite3_vfs](base)
	v := cMem[sqlite3.Tsqlite3_vfs](vfs)
	*v = *baseVFS
	v.FpNext = 0
	v.FzName = name
	v.FszOsFile = baseVFS.FszOsFile + vfsFileHead
	v.FxOpen = cFunc(vfsOpen)

	m := cMem[sqlite3.Tsqlite3_io_methods](io)
	m.FiVersion = 3
	m.FxClose = cFunc(vfsClose)
	m.FxRead = cFunc(vfsRead)
	m.FxWrite = cFunc(vfsWrite)
	m.FxTruncate = cFunc(vfsTruncate)
	m.FxSync = cFunc(vfsSync)
	m.FxFileSize = cFunc(vfsFileSize)
	m.FxLock = cFunc(vfsLock)
	m.FxUnlock = cFunc(vfsUnlock)
	m.FxCheckReservedLock = cFunc(vfsCheckReservedLock)
	m.FxFileControl = cFunc(vfsFileControl)
	m.FxSectorSize = cFunc(vfsSectorSize)
	m.FxDeviceCharacteristics = cFunc(vfsDeviceCharacteristics)
	m.FxShmMap = cFunc(vfsShmMap)
	m.FxShmLock = cFunc(vfsShmLock)
	m.FxShmBarrier = cFunc(vfsShmBarrier)
	m.FxShmUnmap = cFunc(vfsShmUnmap)
	m.FxFetch = cFunc(vfsFetch)
	m.FxUnfetch = cFunc(vfsUnfetch)
	vfsIO = io
	vfsFiles.open = make(map[uintptr]*vfsFile)
	if sqlite3.Xsqlite3_vfs_register(tls, vfs, 0) != sqlite3.SQLITE_OK {
		vfsFailed = true
	}
}

// vfsOpen opens a file with the system's VFS; a log or a database file
// gets this VFS's methods around the system's.
func vfsOpen(tls *libc.TLS, vfs, name, file uintptr, flags int32, outFlags uintptr) int32 {
	open := goFunc[func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32](baseVFS.FxOpen)
	log := flags&sqlite3.SQLITE_OPEN_WAL != 0
	if !log && flags&sqlite3.SQLITE_OPEN_MAIN_DB == 0 {
		return open(tls, vfs, name, file, flags, outFlags)
	}
	head := cMem[[2]uintptr](file)
	head[0], head[1] = 0, 0 // no methods: SQLite closes nothing if the open fails
	inner := file + vfsFileHead
	rc := open(tls, vfs, name, inner, flags, outFlags)
	methods := *cMem[uintptr](inner)
	if rc != sqlite3.SQLITE_OK || methods == 0 {
		return rc
	}
	f := &vfsFile{inner: inner, methods: cMem[sqlite3.Tsqlite3_io_methods](methods), log: log}
	vfsFiles.Lock()
	vfsFiles.open[file] = f
	vfsFiles.Unlock()
	head[0] = vfsIO
	return sqlite3.SQLITE_OK
}

func fileOf(file uintptr) *vfsFile {
	vfsFiles.Lock()
	f := vfsFiles.open[file]
	vfsFiles.Unlock()
	return f
}

// write writes to f's file at once.
func (f *vfsFile) write(tls *libc.TLS, data uintptr, amt int32, off int64) int32 {
	return goFunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.methods.FxWrite)(tls, f.inner, data, amt, off)
}

// flush writes what f gathered.
func (f *vfsFile) flush(tls *libc.TLS) int32 {
	if f.n == 0 {
		return sqlite3.SQLITE_OK
	}
	n := f.n
	f.n = 0
	walCalls.written.Add(1)
	return f.write(tls, f.buf, int32(n), f.off)
}

// flushed is the open file, once what it gathered is written: the
// methods that could see the file call it first.
func flushed(tls *libc.TLS, file uintptr) (*vfsFile, int32) {
	f := fileOf(file)
	return f, f.flush(tls)
}

func vfsWrite(tls *libc.TLS, file, data uintptr, amt int32, off int64) int32 {
	f := fileOf(file)
	if !f.log {
		return f.write(tls, data, amt, off)
	}
	walCalls.gathered.Add(1)
	if f.n > 0 && (off != f.off+int64(f.n) || f.n+int(amt) > walBufSize) {
		if rc := f.flush(tls); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if int(amt) > walBufSize {
		walCalls.written.Add(1)
		return f.write(tls, data, amt, off)
	}
	if f.buf == 0 {
		if f.buf = libc.Xmalloc(tls, walBufSize); f.buf == 0 {
			return sqlite3.SQLITE_NOMEM
		}
	}
	if f.n == 0 {
		f.off = off
	}
	copy(unsafe.Slice(cMem[byte](f.buf+uintptr(f.n)), amt), unsafe.Slice(cMem[byte](data), amt))
	f.n += int(amt)
	return sqlite3.SQLITE_OK
}

func vfsClose(tls *libc.TLS, file uintptr) int32 {
	f := fileOf(file)
	rc := f.flush(tls)
	if rc2 := goFunc[func(*libc.TLS, uintptr) int32](f.methods.FxClose)(tls, f.inner); rc == sqlite3.SQLITE_OK {
		rc = rc2
	}
	vfsFiles.Lock()
	delete(vfsFiles.open, file)
	vfsFiles.Unlock()
	if f.buf != 0 {
		libc.Xfree(tls, f.buf)
	}
	return rc
}

func vfsRead(tls *libc.TLS, file, data uintptr, amt int32, off int64) int32 {
	f, rc := flushed(tls, file)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.methods.FxRead)(tls, f.inner, data, amt, off)
}

func vfsTruncate(tls *libc.TLS, file uintptr, size int64) int32 {
	f, rc := flushed(tls, file)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int64) int32](f.methods.FxTruncate)(tls, f.inner, size)
}

func vfsSync(tls *libc.TLS, file uintptr, flags int32) int32 {
	f, rc := flushed(tls, file)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxSync)(tls, f.inner, flags)
}

func vfsFileSize(tls *libc.TLS, file, size uintptr) int32 {
	f, rc := flushed(tls, file)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, uintptr) int32](f.methods.FxFileSize)(tls, f.inner, size)
}

func vfsFileControl(tls *libc.TLS, file uintptr, op int32, arg uintptr) int32 {
	f, rc := flushed(tls, file)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int32, uintptr) int32](f.methods.FxFileControl)(tls, f.inner, op, arg)
}

func vfsFetch(tls *libc.TLS, file uintptr, off int64, amt int32, pp uintptr) int32 {
	f, rc := flushed(tls, file)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int64, int32, uintptr) int32](f.methods.FxFetch)(tls, f.inner, off, amt, pp)
}

// vfsUnfetch releases a page of the map, or, with p 0, is SQLite saying
// the map may no longer fit the file: it is then dropped only if the
// file's size is not the map's.
func vfsUnfetch(tls *libc.TLS, file uintptr, off int64, p uintptr) int32 {
	f := fileOf(file)
	if u := cMem[sqlite3.TunixFile](f.inner); p == 0 && u.FpMapRegion != 0 && u.FnFetchOut == 0 {
		size := tls.Alloc(8)
		rc := goFunc[func(*libc.TLS, uintptr, uintptr) int32](f.methods.FxFileSize)(tls, f.inner, size)
		same := rc == sqlite3.SQLITE_OK && *cMem[int64](size) == u.FmmapSize
		tls.Free(8)
		if same {
			mapsKept.Add(1)
			return sqlite3.SQLITE_OK
		}
	}
	return goFunc[func(*libc.TLS, uintptr, int64, uintptr) int32](f.methods.FxUnfetch)(tls, f.inner, off, p)
}

func vfsLock(tls *libc.TLS, file uintptr, lock int32) int32 {
	f := fileOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxLock)(tls, f.inner, lock)
}

func vfsUnlock(tls *libc.TLS, file uintptr, lock int32) int32 {
	f := fileOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxUnlock)(tls, f.inner, lock)
}

func vfsCheckReservedLock(tls *libc.TLS, file, out uintptr) int32 {
	f := fileOf(file)
	return goFunc[func(*libc.TLS, uintptr, uintptr) int32](f.methods.FxCheckReservedLock)(tls, f.inner, out)
}

func vfsSectorSize(tls *libc.TLS, file uintptr) int32 {
	f := fileOf(file)
	return goFunc[func(*libc.TLS, uintptr) int32](f.methods.FxSectorSize)(tls, f.inner)
}

func vfsDeviceCharacteristics(tls *libc.TLS, file uintptr) int32 {
	f := fileOf(file)
	return goFunc[func(*libc.TLS, uintptr) int32](f.methods.FxDeviceCharacteristics)(tls, f.inner)
}

func vfsShmMap(tls *libc.TLS, file uintptr, region, size, extend int32, pp uintptr) int32 {
	f := fileOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32, int32, int32, uintptr) int32](f.methods.FxShmMap)(tls, f.inner, region, size, extend, pp)
}

func vfsShmLock(tls *libc.TLS, file uintptr, off, n, flags int32) int32 {
	f := fileOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32, int32, int32) int32](f.methods.FxShmLock)(tls, f.inner, off, n, flags)
}

func vfsShmBarrier(tls *libc.TLS, file uintptr) {
	f := fileOf(file)
	goFunc[func(*libc.TLS, uintptr)](f.methods.FxShmBarrier)(tls, f.inner)
}

func vfsShmUnmap(tls *libc.TLS, file uintptr, deleteFlag int32) int32 {
	f := fileOf(file)
	return goFunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxShmUnmap)(tls, f.inner, deleteFlag)
}
