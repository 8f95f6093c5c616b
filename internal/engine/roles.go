package engine

import (
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/knowhub/knowhub/internal/search"
)

// PageRole is what a docs page is for, as its path tells: the reference
// that describes the product today, a page kept for a product or a
// version that is gone, or a dated page (release notes, a blog post, an
// announcement) that tells what changed at one time.
type PageRole uint8

const (
	// RoleCurrent is a page of today's documentation.
	RoleCurrent PageRole = iota
	// RoleLegacy is a page of a superseded product or version: a folder
	// named legacy, deprecated, archive(d), obsolete or superseded on its
	// path, or a glob of its repository's demote list (config.Repository).
	RoleLegacy
	// RoleDated is a release note, blog post, news item or announcement:
	// a folder named blog, posts, news, releases, release_notes or
	// announcements, or a file named changelog or release notes.
	RoleDated
)

// legacyFolders and datedFolders name the path segments of PageRole.
var (
	legacyFolders = map[string]bool{"legacy": true, "deprecated": true, "archive": true, "archived": true,
		"obsolete": true, "superseded": true}
	datedFolders = map[string]bool{"blog": true, "blogs": true, "posts": true, "news": true, "releases": true,
		"release_notes": true, "release-notes": true, "releasenotes": true, "announcements": true,
		"changelog": true, "changelogs": true}
	datedFiles = map[string]bool{"changelog": true, "changes": true, "release_notes": true, "release-notes": true,
		"releasenotes": true, "history": true, "news": true}
)

// RoleOf returns the role of the page at the slash-separated path p,
// relative to its repository root. A legacy folder wins over a dated one:
// the release notes of a superseded product are legacy.
func RoleOf(p string) PageRole {
	p = strings.ToLower(p)
	dir, file := path.Split(p)
	role := RoleCurrent
	for seg := range strings.SplitSeq(strings.Trim(dir, "/"), "/") {
		switch {
		case legacyFolders[seg]:
			return RoleLegacy
		case datedFolders[seg]:
			role = RoleDated
		}
	}
	if datedFiles[strings.TrimSuffix(file, path.Ext(file))] {
		role = RoleDated
	}
	return role
}

// roleOfSource is RoleOf the source's path, where a current page that a
// glob of its repository's demote list matches is legacy.
func roleOfSource(src *search.Source) PageRole {
	r := RoleOf(src.Path)
	if r == RoleCurrent {
		for _, g := range src.Meta.Demote {
			if ok, _ := doublestar.Match(g, src.Path); ok {
				return RoleLegacy
			}
		}
	}
	return r
}

// roleFactor is what a page of role r keeps of its score under p.
func (p PageScoring) roleFactor(r PageRole) float64 {
	switch r {
	case RoleLegacy:
		return 1 - p.Legacy
	case RoleDated:
		return 1 - p.Dated
	}
	return 1
}
