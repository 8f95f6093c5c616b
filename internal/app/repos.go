package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
)

// RepoFiles is one repository as KH_FILES holds it: how many of its files
// are live (not tombstoned).
type RepoFiles struct {
	Name  string `json:"name"`
	Files int    `json:"files"`
}

// ListRepos lists the repositories with at least one live file in
// KH_FILES, by name.
func ListRepos(ctx context.Context, js jetstream.JetStream) ([]RepoFiles, error) {
	files, err := liveFiles(ctx, js, "*")
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, f := range files {
		counts[f.repo]++
	}
	out := make([]RepoFiles, 0, len(counts))
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		out = append(out, RepoFiles{Name: name, Files: counts[name]})
	}
	return out, nil
}

// RemoveRepo tombstones every live file of the repository name in
// KH_FILES; the pipeline then removes them from the index. It returns how
// many files it tombstoned.
func RemoveRepo(ctx context.Context, js jetstream.JetStream, name string) (int, error) {
	if !contract.ValidRepoName(name) {
		return 0, fmt.Errorf("repository name %q is not valid", name)
	}
	files, err := liveFiles(ctx, js, name)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		ev := &contract.FileEvent{Schema: contract.SchemaVersion, Repo: f.repo, Path: f.path, Meta: f.meta, Deleted: true}
		msg := &nats.Msg{Subject: f.subject, Header: nats.Header{}, Data: contract.EncodeFileEvent(ev)}
		msg.Header.Set(contract.HeaderOp, contract.OpDelete)
		msg.Header.Set(contract.HeaderRepo, f.repo)
		msg.Header.Set(contract.HeaderSchema, strconv.Itoa(contract.SchemaVersion))
		msg.Header.Set(nats.ExpectedLastSubjSeqHdr, strconv.FormatUint(f.seq, 10))
		_, err := js.PublishMsg(ctx, msg)
		switch {
		case bus.IsWrongLastSequence(err):
			continue // changed meanwhile: its producer still serves it
		case err != nil:
			return n, fmt.Errorf("tombstone %s/%s: %w", f.repo, f.path, err)
		}
		n++
	}
	return n, nil
}

// Reconcile removes every repository that KH_FILES holds but keep does not
// name, logging each with its number of files. `knowhub up` calls it at
// start, where the configuration names every repository served.
func Reconcile(ctx context.Context, js jetstream.JetStream, keep []string, log *slog.Logger) error {
	repos, err := ListRepos(ctx, js)
	if err != nil {
		return err
	}
	for _, r := range repos {
		if slices.Contains(keep, r.Name) {
			continue
		}
		n, err := RemoveRepo(ctx, js, r.Name)
		if err != nil {
			return fmt.Errorf("remove repository %s: %w", r.Name, err)
		}
		log.Warn("repository no longer configured: removing it from the index", "repo", r.Name, "files", n)
	}
	return nil
}

type liveFile struct {
	subject, repo, path string
	seq                 uint64
	meta                contract.RepoMeta
}

// liveFiles returns the files of repository repo ("*": every one) whose
// last KH_FILES message is not a tombstone.
func liveFiles(ctx context.Context, js jetstream.JetStream, repo string) ([]liveFile, error) {
	stream, err := js.Stream(ctx, contract.StreamFiles)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", contract.StreamFiles, err)
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(contract.SubjectFiles+"."+repo+".*"))
	if err != nil {
		return nil, fmt.Errorf("stream %s info: %w", contract.StreamFiles, err)
	}
	var out []liveFile
	for _, subj := range slices.Sorted(maps.Keys(info.State.Subjects)) {
		m, err := stream.GetLastMsgForSubject(ctx, subj)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", subj, err)
		}
		ev, err := contract.DecodeFileEvent(m.Data)
		if err != nil || ev.Deleted || contract.FileSubject(ev.Repo, ev.Path) != subj {
			continue // a tombstone, or a message the chunker dead-letters
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(subj, contract.SubjectFiles+"."), ".")
		out = append(out, liveFile{subject: subj, repo: name, path: ev.Path, seq: m.Sequence, meta: ev.Meta})
	}
	return out, nil
}
