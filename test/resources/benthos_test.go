package resources

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/eventually"
	"github.com/connectd/connectd/internal/kafkatest"
)

// benthosResourceFiles returns resources/benthos/*.yaml, relative to the
// repository root.
func benthosResourceFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "resources", "benthos", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no resources/benthos/*.yaml: %v", err)
	}
	for i, f := range files {
		files[i], _ = filepath.Rel(repoRoot(t), f)
	}
	return files
}

// resourceRefs returns every `resource: <label>` in a YAML document.
func resourceRefs(n *yaml.Node, out map[string]bool) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "resource" && v.Kind == yaml.ScalarNode {
				out[v.Value] = true
			}
		}
	}
	for _, c := range n.Content {
		resourceRefs(c, out)
	}
}

// TestBenthosResourceFilesLint: each resource file lints on its own, and
// every config/ example that references a resource lints with the resource
// files (`connectd lint -r`, one flag per file: lint does not expand globs
// as run does) and finds each label it references in them.
func TestBenthosResourceFilesLint(t *testing.T) {
	t.Parallel()
	files := benthosResourceFiles(t)
	labels := map[string]string{}
	var rflags []string
	for _, f := range files {
		if out, code := runCLI(t, time.Minute, "lint", f); code != 0 {
			t.Errorf("connectd lint %s: exit %d\n%s", f, code, out)
		}
		rflags = append(rflags, "-r", f)
		b, err := os.ReadFile(filepath.Join(repoRoot(t), f))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string][]struct {
			Label string `yaml:"label"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for kind, list := range doc {
			if !strings.HasSuffix(kind, "_resources") {
				t.Errorf("%s: top-level field %s: a resource file holds only *_resources", f, kind)
			}
			for _, r := range list {
				if r.Label == "" {
					t.Errorf("%s: a resource under %s without a label", f, kind)
				}
				labels[r.Label] = f
			}
		}
	}

	configs, err := filepath.Glob(filepath.Join(repoRoot(t), "config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, c := range configs {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		refs := map[string]bool{}
		resourceRefs(&doc, refs)
		if len(refs) == 0 {
			continue
		}
		users++
		rel, _ := filepath.Rel(repoRoot(t), c)
		var names []string
		for r := range refs {
			names = append(names, r)
			if labels[r] == "" {
				t.Errorf("%s: resource %q is in no file of resources/benthos", rel, r)
			}
		}
		sort.Strings(names)
		if !strings.Contains(string(b), "-r 'resources/benthos/*.yaml'") {
			t.Errorf("%s uses resources %v: its header should show how to run it with -r 'resources/benthos/*.yaml'", rel, names)
		}
		if out, code := runCLI(t, time.Minute, append(append([]string{"lint"}, rflags...), rel)...); code != 0 {
			t.Errorf("connectd lint %s %s: exit %d\n%s", strings.Join(rflags, " "), rel, code, out)
		}
	}
	if users == 0 {
		t.Error("no config/ example uses the resources of resources/benthos")
	}
}

// TestDeadLetterExampleRuns runs config/dead_letter.yaml as its header says,
// `connectd run -r 'resources/benthos/*.yaml'`, on the real broker: records
// that decode are copied (read_committed), the others land on the
// dead-letter topic with their original bytes, key and the dlq_* headers;
// and without -r the run stops at start-up naming the missing resource.
func TestDeadLetterExampleRuns(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	in := kafkatest.NewTopic(t, brokers, "res-dlq-in", 2)
	out := kafkatest.NewTopic(t, brokers, "res-dlq-out", 1)
	dlq := kafkatest.NewTopic(t, brokers, "res-dlq-dlq", 1)

	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const good, bad = 20, 3
	err = kafkatest.ProduceN(context.Background(), cl, good+bad, func(i int64) *kgo.Record {
		v := fmt.Sprintf(`{"order_id":%d,"customer":"c%d","amount":%d.5}`, i, i%3, i)
		if i%8 == 3 {
			v = fmt.Sprintf("order %d, not JSON", i)
		}
		return &kgo.Record{Topic: in, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(v)}
	})
	if err != nil {
		t.Fatal(err)
	}

	env := []string{
		"CONNECTD_BROKERS=" + brokers, "CONNECTD_DLQ_IN=" + in, "CONNECTD_DLQ_OUT=" + out, "CONNECTD_DLQ_TOPIC=" + dlq,
		"CONNECTD_DLQ_GROUP=" + in + "-g", "CONNECTD_DLQ_TXN_PREFIX=" + in, "CONNECTD_DLQ_PIPELINE=orders-copy",
		"CONNECTD_BACKFILL_RATE=1000",
	}

	// Without the resource files the run must not start.
	bin := connectdBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "config/dead_letter.yaml")
	cmd.Dir, cmd.Env = repoRoot(t), append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "rate limit resource 'backfill' was not found") {
		t.Errorf("connectd run config/dead_letter.yaml without -r: %v, want a start-up failure naming the resource:\n%s", err, lastLines(string(b), 10))
	}

	p := startProcess(t, env, "run", "-s", "http.enabled=false", "-r", "resources/benthos/*.yaml", "config/dead_letter.yaml")
	copied := map[string]bool{}
	dead := map[string]*kgo.Record{}
	reader, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(out, dlq),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	eventually.NoError(t, 2*time.Minute, fmt.Sprintf("%d records copied and %d dead-lettered", good, bad), func() error {
		pctx, pcancel := context.WithTimeout(context.Background(), time.Second)
		defer pcancel()
		reader.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
			if r.Topic == out {
				copied[string(r.Key)] = true
			} else {
				dead[string(r.Key)] = r
			}
		})
		if len(copied) < good || len(dead) < bad {
			return fmt.Errorf("copied %d, dead-lettered %d\n%s", len(copied), len(dead), lastLines(p.logs.String(), 10))
		}
		return nil
	})
	for k, r := range dead {
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		if !strings.HasPrefix(string(r.Value), "order ") {
			t.Errorf("dead letter %s: value %q, want the original bytes", k, r.Value)
		}
		if h["dlq_error"] == "" || h["dlq_pipeline"] != "orders-copy" || !strings.HasPrefix(h["dlq_source"], in+"/") || h["dlq_failed_at"] == "" {
			t.Errorf("dead letter %s: headers %v, want dlq_error, dlq_source %s/<partition>@<offset>, dlq_pipeline and dlq_failed_at", k, h, in)
		}
		if copied[k] {
			t.Errorf("record %s both copied and dead-lettered", k)
		}
	}
}
