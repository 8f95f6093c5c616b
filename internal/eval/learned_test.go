package eval

import (
	"flag"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/learn"
)

var learnedTune = flag.Bool("learned.tune", false, "measure the learned field's weight on the dev halves of the judged docs sets (needs ../shared/corpora)")

// TestLearnedWeightOnDev measures learned vocabulary on the dev halves of
// the question and symptom sets of each corpus, which judge the same pages
// with differently worded queries. Each dev query of one set teaches its
// words to the first relevant section among its top 10 hits, as an agent
// that searched and used that section would; the other set's dev queries,
// paraphrases of other wording, are then scored with the learned field at
// each weight. Run with -learned.tune -v.
func TestLearnedWeightOnDev(t *testing.T) {
	if !*learnedTune {
		t.Skip("a measurement: run with -learned.tune")
	}
	corpora := "../../../shared/corpora"
	an := engine.NewEngine(engine.Limits{}).Analyzer()
	weights := []float64{0, 0.5, 1, 2, 3, 5}
	for _, corpus := range []string{"openclaw", "nats", "prometheus"} {
		var sets [2]Set
		for i, kind := range []string{"questions-", "symptoms-"} {
			s, err := LoadSet(filepath.Join("testdata/docs", kind+corpus))
			if err != nil {
				t.Fatal(err)
			}
			sets[i] = s
		}
		dir := filepath.Join(corpora, sets[0].Corpus)
		base, err := IndexMarkdownWith(t.Context(), dir, MarkdownOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for dirn := range 2 {
			teacher, student := sets[dirn], sets[1-dirn]
			tq, tr, err := teacher.Load(Dev)
			if err != nil {
				t.Fatal(err)
			}
			sq, sr, err := student.Load(Dev)
			if err != nil {
				t.Fatal(err)
			}
			learned := map[string]*contract.LearnedRecord{}
			taught := 0
			for _, q := range tq {
				resp, err := base.engine.SearchDocs(contract.SearchRequest{Query: q.Text, TopK: 10})
				if err != nil {
					t.Fatal(err)
				}
				words := learn.Words(q.Text, an)
				for _, h := range resp.Hits {
					if tr[q.ID][h.Path] > 0 && len(words) > 0 {
						rec := learned[h.Path]
						if rec == nil {
							rec = &contract.LearnedRecord{Repo: h.Repo, Path: h.Path}
							learned[h.Path] = rec
						}
						rec.Apply(&contract.LearnedEvent{Op: contract.LearnedAdd, TranscriptID: q.ID, HeadingPath: h.HeadingPath, Words: words})
						taught++
						break
					}
				}
			}
			line := ""
			for _, w := range weights {
				sc := engine.DefaultScoring()
				sc.Docs.Fields[len(sc.Docs.Fields)-1].Weight = w
				c := newCollection(true)
				c.engine = engine.NewEngineScoring(engine.Limits{DefaultTopK: Depth, MaxTopK: maxChunkHits, MaxToolLimit: Depth}, sc)
				if err := c.addMarkdown(t.Context(), repo, dir, MarkdownOptions{Learned: learned}, 0); err != nil {
					t.Fatal(err)
				}
				rep, err := Run(t.Context(), c, sq, sr, Options{})
				if err != nil {
					t.Fatal(err)
				}
				self, err := Run(t.Context(), c, tq, tr, Options{})
				if err != nil {
					t.Fatal(err)
				}
				line += " " + ftoa(w) + ":" + ftoa(rep.NDCG10) + "/" + ftoa(self.NDCG10)
			}
			t.Logf("%s taught by %s (%d of %d dev queries taught): weight:paraphrase nDCG@10/teacher nDCG@10%s", student.Name, teacher.Name, taught, len(tq), line)
		}
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }
