package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/search"
)

// sectionBody is what an agent reads of a section: its Markdown as
// written when the index holds it, else its plain text.
func sectionBody(en *search.Entry) string {
	if en.Markdown != "" {
		return en.Markdown
	}
	return en.Text
}

// ErrNotFound marks a read of a section or page the index does not hold.
var ErrNotFound = errors.New("not found")

// ReadDocs returns what a docs read asks for: the section a hit's id names,
// alone, with its neighbours or with its whole page, or a page by
// repository and path. Section texts are as indexed (redacted); a removed
// file's sections are not found.
func (e *Engine) ReadDocs(req contract.DocsReadRequest) (*contract.DocsReadResponse, error) {
	ctx := req.Context
	switch {
	case ctx == "" && req.ID != "":
		ctx = contract.ReadSection
	case ctx == "":
		ctx = contract.ReadPage
	case ctx != contract.ReadSection && ctx != contract.ReadNeighbours && ctx != contract.ReadPage:
		return nil, badRequest("context %q is not %s, %s or %s", req.Context, contract.ReadSection, contract.ReadNeighbours, contract.ReadPage)
	}
	var page []*search.Entry
	switch {
	case req.Repo != "" && req.Path != "":
		page = e.docs.Entries(contract.DocKey(req.Repo, req.Path))
		if len(page) == 0 {
			return nil, fmt.Errorf("%w: no page %s in repository %s", ErrNotFound, req.Path, req.Repo)
		}
	case req.ID != "":
		e.docs.EachEntry(func(en *search.Entry) bool {
			if en.ID == req.ID {
				page = e.docs.Entries(en.Source.Key)
				return false
			}
			return true
		})
		if len(page) == 0 {
			return nil, fmt.Errorf("%w: no section %s", ErrNotFound, req.ID)
		}
	default:
		return nil, badRequest("name a section (id) or a page (repo and path)")
	}
	slices.SortFunc(page, func(a, b *search.Entry) int { return a.Ord - b.Ord })
	target := -1
	if req.ID != "" {
		target = slices.IndexFunc(page, func(en *search.Entry) bool { return en.ID == req.ID })
		if target < 0 {
			return nil, fmt.Errorf("%w: no section %s in %s", ErrNotFound, req.ID, page[0].Source.Path)
		}
	} else if ctx != contract.ReadPage {
		return nil, badRequest("context %s needs a section id", ctx)
	}
	from, to := 0, len(page)
	switch ctx {
	case contract.ReadSection:
		from, to = target, target+1
	case contract.ReadNeighbours:
		from, to = max(target-1, 0), min(target+2, len(page))
	}
	src := page[0].Source
	resp := &contract.DocsReadResponse{
		Repo: src.Repo, Path: src.Path, Title: page[0].Title, RepoType: src.Meta.Type, Priority: src.Meta.Priority, Seq: src.SourceSeq,
		Target: -1, PageSections: len(page), Sections: make([]contract.DocsSection, 0, to-from),
	}
	for i, en := range page[from:to] {
		if from+i == target {
			resp.Target = i
		}
		resp.Sections = append(resp.Sections, contract.DocsSection{ID: en.ID, Ord: en.Ord, HeadingPath: en.HeadingPath, Text: sectionBody(en)})
	}
	return resp, nil
}
