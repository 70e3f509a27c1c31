package eventwindow

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/metricdoc"
)

// The spec's Metrics section lists exactly the metrics of the table, with
// their kinds.
func TestMetricsDocsAgreeWithTable(t *testing.T) {
	t.Parallel()
	var desc string
	service.GlobalEnvironment().WalkBuffers(func(name string, v *service.ConfigView) {
		if name == "event_window" {
			desc = v.Description()
		}
	})
	if err := metricdoc.Agree(desc, metricDocs); err != nil {
		t.Error(err)
	}
}
