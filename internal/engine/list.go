package engine

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/search"
)

// Bounds of a page listing.
const (
	DefaultPagesLimit = 100
	MaxPagesLimit     = 1000
)

// ListRepos lists the repositories of the docs index: their type and
// priority, files and sections, and the sequence of their newest file.
func (e *Engine) ListRepos() *contract.DocsReposResponse {
	byRepo := map[string]*contract.DocsRepo{}
	e.docs.EachSource(func(s *search.Source, chunks int) {
		r := byRepo[s.Repo]
		if r == nil {
			r = &contract.DocsRepo{Repo: s.Repo, Type: s.Meta.Type, Priority: s.Meta.Priority}
			byRepo[s.Repo] = r
		}
		r.Files++
		r.Sections += chunks
		r.LastSeq = max(r.LastSeq, s.SourceSeq)
	})
	return sortedRepos(byRepo)
}

// sortedRepos lists repositories by priority, then name.
func sortedRepos(byRepo map[string]*contract.DocsRepo) *contract.DocsReposResponse {
	resp := &contract.DocsReposResponse{Repos: make([]contract.DocsRepo, 0, len(byRepo))}
	for _, r := range byRepo {
		resp.Repos = append(resp.Repos, *r)
	}
	slices.SortFunc(resp.Repos, func(a, b contract.DocsRepo) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Repo, b.Repo))
	})
	return resp
}

// ListPages lists a repository's pages by path, a window of them at a
// time; a repository the index does not hold is not found.
func (e *Engine) ListPages(req contract.DocsPagesRequest) (*contract.DocsPagesResponse, error) {
	if req.Offset < 0 || req.Limit < 0 {
		return nil, badRequest("offset and limit must not be negative")
	}
	return e.listPages(req, MaxPagesLimit)
}

// listPages is ListPages with a window of at most maxLimit pages.
func (e *Engine) listPages(req contract.DocsPagesRequest, maxLimit int) (*contract.DocsPagesResponse, error) {
	limit := cmp.Or(req.Limit, DefaultPagesLimit)
	if limit > maxLimit {
		return nil, badRequest("limit %d is over %d", limit, maxLimit)
	}
	var pages []contract.DocsPage
	e.docs.EachSource(func(s *search.Source, chunks int) {
		if s.Repo == req.Repo {
			pages = append(pages, contract.DocsPage{Path: s.Path, Sections: chunks, Seq: s.SourceSeq})
		}
	})
	if len(pages) == 0 {
		return nil, fmt.Errorf("%w: no repository %q in the index", ErrNotFound, req.Repo)
	}
	slices.SortFunc(pages, func(a, b contract.DocsPage) int { return cmp.Compare(a.Path, b.Path) })
	resp := &contract.DocsPagesResponse{Repo: req.Repo, Total: len(pages), Pages: []contract.DocsPage{}}
	if req.Offset < len(pages) {
		resp.Pages = pages[req.Offset:min(req.Offset+limit, len(pages))]
	}
	for i := range resp.Pages {
		if entries := e.docs.Entries(contract.DocKey(req.Repo, resp.Pages[i].Path)); len(entries) > 0 {
			resp.Pages[i].Title = entries[0].Title
		}
	}
	return resp, nil
}
