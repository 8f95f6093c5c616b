package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Load reads the configuration file at path and returns it with defaults
// applied, paths resolved against the file's directory, and validated.
// Every problem found is reported, each naming its field.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(data, filepath.Dir(abs))
	if err != nil {
		return nil, &fileError{path: path, err: err}
	}
	return c, nil
}

// Parse decodes a configuration document strictly (unknown keys are
// errors), overlays it on Default, resolves its paths against baseDir (the
// working directory when empty) and validates the result. A document that
// does not decode (bad syntax, unknown keys, wrong types) is reported
// without validating the rest.
func Parse(data []byte, baseDir string) (*Config, error) {
	c := Default()
	if err := decodeStrict(data, c); err != nil {
		return nil, err
	}
	if err := c.resolvePaths(baseDir); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// fileError prefixes a configuration error with the file it came from,
// one problem per line when there are several.
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string {
	msg := e.err.Error()
	if !strings.Contains(msg, "\n") {
		return "config " + e.path + ": " + msg
	}
	return "config " + e.path + ":\n  " + strings.ReplaceAll(msg, "\n", "\n  ")
}

func (e *fileError) Unwrap() error { return e.err }

// resolvePaths expands "~" in every path field and makes relative ones
// absolute against base (the working directory when empty).
func (c *Config) resolvePaths(base string) error {
	base, err := filepath.Abs(base) // the working directory when empty
	if err != nil {
		return fmt.Errorf("resolve paths: %w", err)
	}
	type pathField struct {
		name string
		p    *string
	}
	fields := []pathField{
		{"dataDir", &c.DataDir},
		{"query.segmentDir", &c.Query.SegmentDir},
		{"nats.credsFile", &c.NATS.CredsFile},
		{"nats.nkeyFile", &c.NATS.NKeyFile},
		{"nats.tlsCA", &c.NATS.TLSCA},
		{"nats.tlsCert", &c.NATS.TLSCert},
		{"nats.tlsKey", &c.NATS.TLSKey},
		{"http.tlsCert", &c.HTTP.TLSCert},
		{"http.tlsKey", &c.HTTP.TLSKey},
	}
	for i := range c.Repositories {
		fields = append(fields, pathField{fmt.Sprintf("repositories[%d].path", i), &c.Repositories[i].Path})
	}
	var e errs
	for _, f := range fields {
		if *f.p == "" {
			continue
		}
		p, err := resolvePath(*f.p, base)
		if err != nil {
			e.add(f.name, "%v", err)
			continue
		}
		*f.p = p
	}
	return e.err()
}

// resolvePath expands a leading "~" and makes a relative path absolute
// against base, or against the working directory when base is empty.
func resolvePath(p, base string) (string, error) {
	p, err := expandHome(p)
	if err != nil {
		return "", err
	}
	switch {
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	case base != "":
		return filepath.Join(base, p), nil
	default:
		return filepath.Abs(p)
	}
}

// expandHome replaces a leading "~" or "~/" with the user's home
// directory. "~user" is not supported.
func expandHome(p string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	rest := p[1:]
	if rest != "" && rest[0] != '/' && rest[0] != filepath.Separator {
		return "", fmt.Errorf("%q: only \"~\" and \"~/\" are expanded, not \"~user\"", p)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand %q: %w", p, err)
	}
	return filepath.Join(home, rest), nil
}
