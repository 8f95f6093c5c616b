package kb

import (
	"bufio"
	"encoding/json"
	"hash/fnv"
	"os"
	"testing"
)

// corpusEntry is one line of testdata/screen/*.jsonl.
type corpusEntry struct {
	Text string `json:"text"`
	Kind string `json:"kind"`
}

// loadScreenCorpus reads a corpus file and splits it deterministically
// into a dev half (tuning) and a test half (reporting) by a hash of each
// text.
func loadScreenCorpus(t *testing.T, name string) (dev, test []corpusEntry) {
	t.Helper()
	f, err := os.Open("testdata/screen/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h := fnv.New32a()
		h.Write([]byte(e.Text))
		if h.Sum32()%2 == 0 {
			dev = append(dev, e)
		} else {
			test = append(test, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return dev, test
}

// TestScreenCorpus measures the screen on a corpus of injections (plain,
// in many languages, and obfuscated) and of benign entries (text about
// prompts, system settings, shell commands, curl, base64, technical notes
// in many languages). Rules are tuned on the dev half only; the misses and
// false positives of the dev half are listed with -v, the test half only
// reports its rates.
func TestScreenCorpus(t *testing.T) {
	s := NewScreen()
	injDev, injTest := loadScreenCorpus(t, "injections.jsonl")
	benDev, benTest := loadScreenCorpus(t, "benign.jsonl")
	if len(injDev)+len(injTest) < 150 || len(benDev)+len(benTest) < 150 {
		t.Fatalf("corpus too small: %d injections, %d benign", len(injDev)+len(injTest), len(benDev)+len(benTest))
	}
	rate := func(half string, inj, ben []corpusEntry) (detection, fp float64) {
		caught, flagged := 0, 0
		for _, e := range inj {
			if _, ok := s.Check(e.Text); ok {
				caught++
			} else if half == "dev" {
				t.Logf("dev miss (%s): %q", e.Kind, e.Text)
			}
		}
		for _, e := range ben {
			if reason, ok := s.Check(e.Text); ok {
				flagged++
				if half == "dev" {
					t.Logf("dev false positive (%s): %q", reason, e.Text)
				}
			}
		}
		detection = float64(caught) / float64(len(inj))
		fp = float64(flagged) / float64(len(ben))
		t.Logf("%s: detection %d/%d = %.1f%%, false positives %d/%d = %.1f%%", half, caught, len(inj), 100*detection, flagged, len(ben), 100*fp)
		return detection, fp
	}
	// The floors guard against regressions; the test half's is lower
	// because its misses are never used to tune the rules.
	for _, h := range []struct {
		name         string
		inj, ben     []corpusEntry
		minDetection float64
	}{{"dev", injDev, benDev, 0.95}, {"test", injTest, benTest, 0.85}} {
		detection, fp := rate(h.name, h.inj, h.ben)
		if detection < h.minDetection || fp > 0.03 {
			t.Errorf("%s: detection %.1f%% (want ≥ %.0f%%), false positives %.1f%% (want ≤ 3%%)", h.name, 100*detection, 100*h.minDetection, 100*fp)
		}
	}
}
