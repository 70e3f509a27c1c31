package eventwindow

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/speclint"
)

// kafkaKeyInterpolation matches a key that is the record's Kafka key:
// `${! @kafka_key }`, `${! meta("kafka_key") }`, `${! metadata("kafka_key") }`.
var kafkaKeyInterpolation = regexp.MustCompile(`^\$\{!\s*(@kafka_key|meta\("kafka_key"\)|metadata\("kafka_key"\))\s*\}$`)

// lintKeyAcrossProcesses is a `connectd lint` warning over a whole config
// (speclint.RegisterDocumentWarning): behind a kafka_source that shares its
// partitions with other processes (assignment: group, or a shard of more
// than one), a window key that is not the Kafka key may arrive from several
// partitions, read by several processes, each of which would emit a
// partial result. At run time the buffer checks it (partitions.go); lint
// cannot know how the input is keyed, so this is a warning.
func lintKeyAcrossProcesses(root *yaml.Node) []string {
	if root == nil || len(root.Content) == 0 {
		return nil
	}
	doc := root.Content[0]
	bufKey, buf := speclint.Find(speclint.Path(doc, "buffer"), component)
	if buf == nil || buf.Kind != yaml.MappingNode {
		return nil
	}
	_, src := speclint.Find(speclint.Path(doc, "input"), "kafka_source")
	if src == nil || src.Kind != yaml.MappingNode {
		return nil
	}
	how := ""
	if a := speclint.Path(src, "assignment"); a != nil && strings.TrimSpace(a.Value) == "group" {
		how = "assignment: group"
	} else if c := speclint.Path(src, "shard.count"); c != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(c.Value)); err == nil && n > 1 {
			how = fmt.Sprintf("shard.count: %d", n)
		}
	}
	if how == "" {
		return nil
	}
	line, col, what := bufKey.Line, bufKey.Column, "no key (one global window)"
	if k := speclint.Path(buf, FieldKey); k != nil {
		if kafkaKeyInterpolation.MatchString(strings.TrimSpace(k.Value)) {
			return nil
		}
		if k.Value != "" {
			line, col, what = k.Line, k.Column, fmt.Sprintf("key %s", k.Value)
		}
	}
	return []string{fmt.Sprintf("(%d,%d) event_window: field %s: %s is not the Kafka key, and kafka_source reads with %s, "+
		"so other processes read some of the partitions: a window key whose records sit in several partitions gets a partial "+
		"result from each process. Key the input by the window key and use key: ${! @kafka_key }, or repartition first "+
		"(%s); the buffer checks it at run time (metric event_window_keys_from_several_partitions)",
		line, col, FieldKey, what, how, DocsRepartition)}
}

func init() {
	speclint.RegisterDocumentWarning(lintKeyAcrossProcesses)
}
