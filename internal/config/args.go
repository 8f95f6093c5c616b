package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxRepoName is the longest name contract.ValidRepoName accepts.
const maxRepoName = 64

// RepositoriesFromArgs turns the directories given on the command line
// (`knowhub up ./docs ./other/docs`) into core repositories with the
// default glob. Each is named after its directory, sanitized to a valid
// repository name and made unique with "-2", "-3", ...; priorities are
// 100, 110, 120, ... so the first directory wins conflicts. Every path that
// does not exist, is not a directory or repeats an earlier one is reported.
func RepositoriesFromArgs(paths []string) ([]Repository, error) {
	var (
		repos    []Repository
		problems []error
		used     = make(map[string]bool)
		dirs     = make(map[string]string) // absolute path -> argument
	)
	for i, arg := range paths {
		p, err := resolvePath(arg, "")
		if err != nil {
			problems = append(problems, fmt.Errorf("repository %s: %w", arg, err))
			continue
		}
		info, err := os.Stat(p)
		switch {
		case err != nil:
			problems = append(problems, fmt.Errorf("repository %s: %w", arg, err))
			continue
		case !info.IsDir():
			problems = append(problems, fmt.Errorf("repository %s: not a directory", arg))
			continue
		}
		if prev, dup := dirs[p]; dup {
			problems = append(problems, fmt.Errorf("repository %s: same directory as %s", arg, prev))
			continue
		}
		dirs[p] = arg
		r := Repository{Name: uniqueName(repoName(filepath.Base(p)), used), Path: p}
		r.applyDefaults()
		r.Priority = DefaultPriority + 10*i
		repos = append(repos, r)
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	return repos, nil
}

// repoName sanitizes a directory name into a repository name: every run
// of characters other than ASCII letters, digits, '_' and '-' becomes one
// '-', leading and trailing '-' are dropped, and the result is cut to 64
// characters. A name with nothing left becomes "repo".
func repoName(base string) string {
	var b strings.Builder
	dash := false
	for _, r := range base {
		ok := r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
		switch {
		case ok:
			b.WriteRune(r)
			dash = r == '-'
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > maxRepoName {
		name = strings.TrimRight(name[:maxRepoName], "-")
	}
	if name == "" {
		return "repo"
	}
	return name
}

// uniqueName returns name, or name-2, name-3, ... (cut to stay within 64
// characters) if it is taken, and marks the result as taken.
func uniqueName(name string, used map[string]bool) string {
	cand := name
	for n := 2; used[cand]; n++ {
		suffix := fmt.Sprintf("-%d", n)
		cand = name[:min(len(name), maxRepoName-len(suffix))] + suffix
	}
	used[cand] = true
	return cand
}

// CheckPaths reports every repository whose path does not exist or is not
// a directory. Validate does not look at the file system; a command that
// is about to watch the repositories calls this for an early, clear error.
func (c *Config) CheckPaths() error {
	var e errs
	for i, r := range c.Repositories {
		if r.Path == "" {
			continue // Validate reports it
		}
		field := fmt.Sprintf("repositories[%d].path", i)
		info, err := os.Stat(r.Path)
		switch {
		case err != nil:
			e.add(field, "%v", err)
		case !info.IsDir():
			e.add(field, "%s is not a directory", r.Path)
		}
	}
	return e.err()
}
