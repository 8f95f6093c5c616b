package engine

import (
	"fmt"
	"sort"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/search"
)

// Shadow is a hit that lost conflict resolution.
type Shadow struct {
	Hit    search.Hit
	Winner search.Hit
	Reason string
}

// Resolve applies docs conflict resolution to hits (sorted by descending
// score): hits from different repositories whose normalised section paths
// match form a group; the lowest priority number wins, core beats extension
// at equal priority, then the higher score. Hits of the winner's own
// repository stay. Winners keep their relative order.
func Resolve(hits []search.Hit) (kept []search.Hit, shadowed []Shadow) {
	if oneRepo(hits) {
		return hits, nil // conflicts are between repositories
	}
	groups := make(map[string][]int, len(hits))
	order := make([]string, 0, len(hits))
	for i, h := range hits {
		k := h.Entry.SectionKey
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	lost := make([]bool, len(hits))
	for _, k := range order {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		best := idx[0]
		for _, i := range idx[1:] {
			if beats(hits[i], hits[best]) {
				best = i
			}
		}
		winRepo := hits[best].Entry.Source.Repo
		for _, i := range idx {
			if hits[i].Entry.Source.Repo == winRepo {
				continue
			}
			lost[i] = true
			shadowed = append(shadowed, Shadow{Hit: hits[i], Winner: hits[best], Reason: reason(hits[best], hits[i])})
		}
	}
	for i, h := range hits {
		if !lost[i] {
			kept = append(kept, h)
		}
	}
	sort.SliceStable(shadowed, func(i, j int) bool { return shadowed[i].Hit.Score > shadowed[j].Hit.Score })
	return kept, shadowed
}

// beats reports whether a wins a conflict against b.
func beats(a, b search.Hit) bool {
	am, bm := a.Entry.Source.Meta, b.Entry.Source.Meta
	if am.Priority != bm.Priority {
		return am.Priority < bm.Priority
	}
	if ac, bc := am.Type == contract.RepoCore, bm.Type == contract.RepoCore; ac != bc {
		return ac
	}
	return a.Score > b.Score
}

func reason(w, l search.Hit) string {
	wm, lm := w.Entry.Source.Meta, l.Entry.Source.Meta
	switch {
	case wm.Priority != lm.Priority:
		return fmt.Sprintf("repository %s has priority %d, ahead of %s's %d", w.Entry.Source.Repo, wm.Priority, l.Entry.Source.Repo, lm.Priority)
	case wm.Type != lm.Type:
		return fmt.Sprintf("core repository %s beats %s repository %s at equal priority %d", w.Entry.Source.Repo, lm.Type, l.Entry.Source.Repo, wm.Priority)
	default:
		return fmt.Sprintf("same priority and type; %s scored higher (%.3f > %.3f)", w.Entry.Source.Repo, w.Score, l.Score)
	}
}

// oneRepo reports whether every hit comes from the same repository.
func oneRepo(hits []search.Hit) bool {
	for _, h := range hits[min(1, len(hits)):] {
		if h.Entry.Source.Repo != hits[0].Entry.Source.Repo {
			return false
		}
	}
	return true
}
