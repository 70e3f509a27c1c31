package kafkasource

import (
	"encoding/json"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// TestSpecExamplesLint: every example config in the docs lints clean and
// parses into a valid Config.
func TestSpecExamplesLint(t *testing.T) {
	t.Parallel()
	var docs struct {
		Examples []struct {
			Title  string `json:"title"`
			Config string `json:"config"`
		} `json:"examples"`
	}
	service.GlobalEnvironment().WalkInputs(func(name string, view *service.ConfigView) {
		if name != "kafka_source" {
			return
		}
		b, err := view.FormatJSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &docs); err != nil {
			t.Fatal(err)
		}
	})
	if len(docs.Examples) < 4 {
		t.Fatalf("found %d examples, want at least 4", len(docs.Examples))
	}
	for _, ex := range docs.Examples {
		sb := service.NewStreamBuilder()
		if err := sb.SetYAML(ex.Config + "\noutput:\n  drop: {}\n"); err != nil {
			t.Errorf("example %q: %v", ex.Title, err)
		}
	}
}
