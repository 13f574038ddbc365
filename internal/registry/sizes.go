package registry

import "fmt"

// MaxBlobSize is the largest size a manifest may give a blob: 1 PiB, far
// beyond any registry's layers, and small enough that every count and
// limit built on it stays clear of int64 overflow.
const MaxBlobSize = 1 << 50

// checkSize rejects a descriptor size no blob can have: negative, or past
// MaxBlobSize (a size of MaxInt64 would overflow the read limit and end as
// "got 0 bytes"). what names the descriptor ("layer sha256:...").
func checkSize(what string, size int64) error {
	if size < 0 || size > MaxBlobSize {
		return fmt.Errorf("%s has size %d, outside 0 to %d bytes (1 PiB)", what, size, int64(MaxBlobSize))
	}
	return nil
}
