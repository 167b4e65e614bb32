//go:build !race

package statements

const addressSpaceLimit = true
