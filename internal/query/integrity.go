package query

import "sync/atomic"

// integrity holds what is known to be wrong with the index the replica
// serves (a damaged store being rebuilt), or nil.
type integrity struct{ problem atomic.Pointer[string] }

// SetIntegrity records a problem with the index, shown by stats and
// /readyz until it is cleared with "".
func (s *Replica) SetIntegrity(problem string) {
	if problem == "" {
		s.integrity.problem.Store(nil)
		return
	}
	s.integrity.problem.Store(&problem)
}

// Integrity returns the problem SetIntegrity recorded, or "".
func (s *Replica) Integrity() string {
	if p := s.integrity.problem.Load(); p != nil {
		return *p
	}
	return ""
}
