package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// OpenClaw is what knowhub takes from an OpenClaw gateway's configuration
// file (~/.openclaw/openclaw.json): the config block of the doc-engine
// plugin (plugins.entries.doc-engine.config), or of the knowhub plugin
// when it holds repositories.
type OpenClaw struct {
	// Entry is the plugin entry the settings came from.
	Entry          string
	Repositories   []Repository
	SecretPatterns []string
	ChunkMaxTokens int
}

// docEngineConfig is the doc-engine plugin's config shape; its other keys
// (storage, topK, watchEnabled, watchDebounceMs) have knowhub equivalents
// of their own and are ignored. EnglishOnly is doc-engine's language
// filter, on unless set to false; a repository's languages (knowhub's own
// key) override it.
type docEngineConfig struct {
	Repositories []struct {
		Name      string   `json:"name"`
		Path      string   `json:"path"`
		Priority  *float64 `json:"priority"`
		Type      string   `json:"type"`
		Glob      string   `json:"glob"`
		Languages []string `json:"languages"`
	} `json:"repositories"`
	EnglishOnly    *bool    `json:"englishOnly"`
	SecretPatterns []string `json:"secretPatterns"`
	ChunkMaxTokens int      `json:"chunkMaxTokens"`
}

// LoadOpenClaw reads the repositories, secretPatterns and chunkMaxTokens
// of the doc-engine plugin's entry of an OpenClaw configuration file, or,
// when that entry has no repositories, of the knowhub plugin's entry.
// Paths expand "~" and are made absolute against the file's directory;
// a repository without a glob takes DefaultGlob, and one without
// languages takes ["en"], as doc-engine indexes English pages only,
// unless the block sets englishOnly to false (every language). The result is validated
// with the rest of the configuration (ApplyOpenClaw, then Validate).
func LoadOpenClaw(path string) (*OpenClaw, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read openclaw config: %w", err)
	}
	var doc struct {
		Plugins struct {
			Entries map[string]struct {
				Config json.RawMessage `json:"config"`
			} `json:"entries"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, fmt.Errorf("openclaw config %s: line %d, column %d: not JSON (JSON5 comments and trailing commas are not read)", path, line, col)
		}
		return nil, fmt.Errorf("openclaw config %s: plugins.entries must map plugin ids to objects with a config object", path)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("openclaw config %s: %w", path, err)
	}
	for _, id := range []string{"doc-engine", "knowhub"} {
		entry, ok := doc.Plugins.Entries[id]
		if !ok || len(entry.Config) == 0 || string(entry.Config) == "null" {
			continue
		}
		var de docEngineConfig
		if err := decodeStrictLenient(entry.Config, &de); err != nil {
			return nil, fmt.Errorf("openclaw config %s: plugins.entries.%s.config.%w", path, id, err)
		}
		if len(de.Repositories) == 0 {
			continue
		}
		out := &OpenClaw{Entry: id, SecretPatterns: de.SecretPatterns, ChunkMaxTokens: de.ChunkMaxTokens}
		for i, r := range de.Repositories {
			repo := Repository{Name: r.Name, Path: r.Path, Type: r.Type, Glob: r.Glob, Languages: r.Languages}
			if repo.Languages == nil && (de.EnglishOnly == nil || *de.EnglishOnly) {
				// doc-engine indexes English only unless told otherwise:
				// it skips locale folders and non-Latin text.
				repo.Languages = []string{"en"}
			}
			repo.Priority = DefaultPriority
			if r.Priority != nil {
				if *r.Priority != float64(int(*r.Priority)) {
					return nil, fmt.Errorf("openclaw config %s: plugins.entries.%s.config.repositories[%d].priority: must be a whole number, not %v", path, id, i, *r.Priority)
				}
				repo.Priority = int(*r.Priority)
			}
			if repo.Type == "" {
				repo.Type = DefaultType
			}
			if repo.Glob == "" {
				repo.Glob = DefaultGlob
			}
			if repo.Path != "" {
				if repo.Path, err = resolvePath(repo.Path, dir); err != nil {
					return nil, fmt.Errorf("openclaw config %s: plugins.entries.%s.config.repositories[%d].path: %w", path, id, i, err)
				}
			}
			out.Repositories = append(out.Repositories, repo)
		}
		return out, nil
	}
	return nil, fmt.Errorf("openclaw config %s: neither plugins.entries.doc-engine.config nor plugins.entries.knowhub.config lists repositories", path)
}

// decodeStrictLenient decodes a plugin config block, naming a mistyped
// field in JSON terms; unknown keys belong to the plugin and are ignored.
func decodeStrictLenient(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: must be %s", te.Field, kindWord(te.Type.Kind().String()))
	}
	return err
}

func kindWord(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "true or false"
	default:
		return "a number"
	}
}

// ApplyOpenClaw adds what LoadOpenClaw found: its repositories after the
// configured ones, its secretPatterns after the configured ones, and its
// chunkMaxTokens when set. Run Validate afterwards.
func (c *Config) ApplyOpenClaw(o *OpenClaw) {
	c.Repositories = append(c.Repositories, o.Repositories...)
	c.Redaction.SecretPatterns = append(c.Redaction.SecretPatterns, o.SecretPatterns...)
	if o.ChunkMaxTokens > 0 {
		c.Chunker.ChunkMaxTokens = o.ChunkMaxTokens
	}
}
