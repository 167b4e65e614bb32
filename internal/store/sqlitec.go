package store

import "unsafe"

// Before SQLite initialises (the first connection does), purser wraps its
// page cache (pcache.go) and registers its VFS (vfs.go). Both reach into
// SQLite's C structures, which modernc.org/sqlite keeps in C memory, with
// the helpers below.
func init() {
	keepMaxKey()
	registerVFS()
}

// cMem is the C memory at p seen as a T.
func cMem[T any](p uintptr) *T { return *(**T)(unsafe.Pointer(&p)) }

// cFunc is Go function f as a C function pointer SQLite can call.
func cFunc[F any](f F) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f F }{f})) }

// goFunc is C function pointer p as a Go function of type F.
func goFunc[F any](p uintptr) F { return *(*F)(unsafe.Pointer(&struct{ uintptr }{p})) }
