//go:build unix

package broker

import "golang.org/x/sys/unix"

// statDisk reads the size and the free space of dir's filesystem.
func statDisk(dir string) (diskSpace, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return diskSpace{}, err
	}
	bs := int64(st.Bsize) //nolint:unconvert // the field's type differs between systems
	return diskSpace{size: int64(st.Blocks) * bs, free: int64(st.Bavail) * bs}, nil
}

// diskGuarded reports whether this system can guard the store's disk.
const diskGuarded = true
