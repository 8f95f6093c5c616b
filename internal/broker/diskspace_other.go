//go:build !unix

package broker

import "errors"

func statDisk(string) (diskSpace, error) {
	return diskSpace{}, errors.New("free space is not read on this system")
}

// diskGuarded reports whether this system can guard the store's disk:
// without it, nats-server's own limit applies.
const diskGuarded = false
