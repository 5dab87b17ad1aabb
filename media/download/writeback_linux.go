package download

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing the n bytes of f at off to disk, without
// waiting (sync_file_range SYNC_FILE_RANGE_WRITE). Only a hint: the
// fsync that follows is what makes the image durable, so an error is
// ignored.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
