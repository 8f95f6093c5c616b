//go:build !unix

package analysis

import "time"

// cpuTime returns 0: process CPU time is only read on Unix.
func cpuTime() time.Duration { return 0 }
