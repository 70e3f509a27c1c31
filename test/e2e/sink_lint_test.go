package e2e

import (
	"strings"
	"testing"
	"time"
)

// `connectd lint` (the built binary, whose lint rules are parsed against the
// methods registered at init) reports kafka_sink's exactly_once and
// partitioner mistakes naming the field and what is allowed.
func TestSinkLintExactlyOnce(t *testing.T) {
	t.Parallel()
	const head = `
input:
  stdin: {}
output:
  kafka_sink:
    seed_brokers: [ "127.0.0.1:9092" ]
    topic: t
`
	for _, tc := range []struct {
		name, extra string
		want        []string // empty: lints clean
	}{
		{name: "clean", extra: `
    delivery_guarantee: exactly-once
    transactional_id_prefix: app
    transactional_id_suffix: "${HOSTNAME:0}"
    batching: { count: 100, period: 1s }
`},
		{name: "period not below the transaction timeout", extra: `
    delivery_guarantee: exactly_once
    transactional_id_prefix: app
    transaction_timeout: 30s
    batching: { period: 30s }
`, want: []string{"field batching.period: must be shorter than transaction_timeout (30s) with delivery_guarantee exactly_once, got 30s"}},
		{name: "missing prefix and parallel transactions", extra: `
    delivery_guarantee: exactly_once
    max_in_flight: 8
`, want: []string{"field transactional_id_prefix: required", "field max_in_flight: must be 1 with delivery_guarantee exactly_once"}},
		{name: "manual partitioner without partition", extra: `
    partitioner: manual
`, want: []string{"field partition: required with partitioner manual"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, "sink.yaml", head+strings.TrimPrefix(tc.extra, "\n"))
			out, code := runCLI(t, 60*time.Second, "lint", path)
			if len(tc.want) == 0 {
				if code != 0 {
					t.Fatalf("want a clean lint, got exit %d:\n%s", code, out)
				}
				return
			}
			if code == 0 {
				t.Fatalf("lint passed, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("lint output does not contain %q:\n%s", w, out)
				}
			}
		})
	}
}
