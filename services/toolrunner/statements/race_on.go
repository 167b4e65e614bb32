//go:build race

package statements

// The race detector reserves terabytes of address space, so a worker built
// with it cannot live under an address-space limit; the parent's RSS
// watchdog still bounds its memory.
const addressSpaceLimit = false
