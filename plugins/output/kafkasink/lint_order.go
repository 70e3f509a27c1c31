package kafkasink

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/speclint"
	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
)

// lintPipelineOrder is a check over a whole config, by `connectd lint` and
// before `connectd run` (speclint.RegisterDocumentCheck): with
// kafka_source feeding kafka_sink in exactly_once, each transaction commits
// the source offsets of its batch, and an offset is held back behind any
// earlier record still in flight. Batches must therefore reach the sink in
// partition order: if a later batch commits first, its offsets stay held
// back and a crash replays it (a duplicate). Benthos runs pipeline
// processors on `pipeline.threads` threads (default -1: one per CPU), which
// can reorder batches, so with processors the pipeline must have one thread.
func lintPipelineOrder(root *yaml.Node) []string {
	if k, _ := speclint.Find(speclint.Path(root.Content[0], "input"), "kafka_source"); k == nil {
		return nil
	}
	if exactlyOnceSink(root) == nil {
		return nil
	}
	pipelineKey, pipeline := speclint.Find(root.Content[0], "pipeline")
	procs := speclint.Path(root.Content[0], "pipeline.processors")
	if pipeline == nil || procs == nil || len(procs.Content) == 0 {
		return nil
	}
	threads := speclint.Path(pipeline, "threads")
	if threads != nil && strings.TrimSpace(threads.Value) == "1" {
		return nil
	}
	line, col, value := pipelineKey.Line, pipelineKey.Column, "-1 (the default)"
	if threads != nil {
		line, col, value = threads.Line, threads.Column, threads.Value
	}
	return []string{fmt.Sprintf("(%d,%d) pipeline: field threads: must be 1 when kafka_source feeds kafka_sink with "+
		"delivery_guarantee exactly_once and the pipeline has processors, got %s: several threads can reorder batches, "+
		"and a batch committed before an earlier one keeps its source offsets held back, so a crash would replay it",
		line, col, value)}
}

// lintWindowBatching is a `connectd lint` check over a whole config: the
// event_window buffer hands an exactly_once kafka_sink one batch of window
// results at a time (see the buffer's docs) and waits for its
// acknowledgement, so a batching policy that flushes only on count or size
// would wait for results that never come.
func lintWindowBatching(root *yaml.Node) []string {
	if speclint.Path(root.Content[0], "buffer.event_window") == nil {
		return nil
	}
	sink := exactlyOnceSink(root)
	if sink == nil {
		return nil
	}
	key, batching := speclint.Find(sink, FieldBatching)
	if batching == nil || speclint.Path(batching, "period") != nil {
		return nil
	}
	if speclint.Path(batching, "count") == nil && speclint.Path(batching, "byte_size") == nil {
		return nil
	}
	return []string{fmt.Sprintf("(%d,%d) kafka_sink: field %s: set a period (or leave %s unset) when an event_window buffer "+
		"feeds kafka_sink with delivery_guarantee exactly_once: the buffer hands out one batch of window results at a "+
		"time and waits for it to commit, so a count or byte_size it does not fill would wait forever",
		key.Line, key.Column, FieldBatching, FieldBatching)}
}

// lintSourceGroup is a `connectd lint` check over a whole config: an
// exactly_once kafka_sink commits the offsets of the kafka_source feeding
// it to the source's consumer group, inside its transactions. A source
// without a group (consumer_group, or its table's properties.group.id) has
// nowhere to keep them, so a restart would read and write every record
// again; at run time the sink refuses such a source (ErrSourceWithoutGroup).
func lintSourceGroup(root *yaml.Node) []string {
	key, src := speclint.Find(speclint.Path(root.Content[0], "input"), "kafka_source")
	if src == nil || src.Kind != yaml.MappingNode || exactlyOnceSink(root) == nil {
		return nil
	}
	if g := speclint.Path(src, "consumer_group"); g != nil && g.Tag != "!!null" && g.Value != "" {
		return nil
	}
	var m map[string]any
	if err := src.Decode(&m); err != nil {
		return nil
	}
	if raw := table.RawFromMap(m); raw.Set() {
		t, ok, err := raw.LintResolve()
		if err != nil || !ok || t.Options[schema.OptGroupID] != "" {
			return nil // the table's own problems are reported by kafka_source's lint
		}
	}
	return []string{fmt.Sprintf("(%d,%d) kafka_source: field consumer_group: required when kafka_source feeds kafka_sink with "+
		"delivery_guarantee exactly_once: the sink commits the source offsets to that group in its transactions, and without "+
		"one a restart would read and write every record again; set consumer_group (or option '%s' of the source's table)",
		key.Line, key.Column, schema.OptGroupID)}
}

// exactlyOnceSink returns the config of the output's kafka_sink if its
// delivery_guarantee is exactly_once, else nil.
func exactlyOnceSink(root *yaml.Node) *yaml.Node {
	_, sink := speclint.Find(speclint.Path(root.Content[0], "output"), "kafka_sink")
	if sink == nil {
		return nil
	}
	g := speclint.Path(sink, FieldDeliveryGuarantee)
	if g == nil || DeliveryGuarantee(normalizeName(g.Value)) != DeliveryExactlyOnce {
		return nil
	}
	return sink
}

func init() {
	speclint.RegisterDocumentCheck(func(root *yaml.Node) []string {
		if root == nil || len(root.Content) == 0 {
			return nil
		}
		return slices.Concat(lintPipelineOrder(root), lintWindowBatching(root), lintSourceGroup(root))
	})
}
