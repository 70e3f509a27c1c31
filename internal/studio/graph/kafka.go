package graph

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/studio/catalog"
	"github.com/connectd/connectd/internal/studio/yamlsrc"
	"github.com/connectd/connectd/schema"
)

// Delivery guarantees of kafka_sink.
const (
	DeliveryNone        = "none"
	DeliveryAtLeastOnce = "at_least_once"
	DeliveryExactlyOnce = "exactly_once"
)

// Kafka is what a Kafka node shows; only the fields that apply are set.
type Kafka struct {
	Topics            []string       `json:"topics,omitempty"`
	TopicPattern      string         `json:"topic_pattern,omitempty"`
	Topic             string         `json:"topic,omitempty"`
	ConsumerGroup     string         `json:"consumer_group,omitempty"`
	Assignment        string         `json:"assignment,omitempty"`
	DeliveryGuarantee string         `json:"delivery_guarantee,omitempty"`
	SeedBrokers       []string       `json:"seed_brokers,omitempty"`
	StartFrom         string         `json:"start_from,omitempty"`
	StopAt            string         `json:"stop_at,omitempty"`
	Watermark         map[string]any `json:"watermark,omitempty"`
	Table             *catalog.Table `json:"table,omitempty"`
	TableError        string         `json:"table_error,omitempty"`
	Format            string         `json:"format,omitempty"`
	OnError           string         `json:"on_error,omitempty"`
	Window            map[string]any `json:"window,omitempty"`
}

// kafka returns the Kafka details of node n (config val), nil for other
// components.
func (b *builder) kafka(n *Node, section string, val *yaml.Node) *Kafka {
	if val == nil || val.Kind != yaml.MappingNode {
		return nil
	}
	k := &Kafka{}
	switch n.Component {
	case "kafka_source":
		if section != SectionInput && section != SectionInputResources {
			return nil
		}
		k.Topics = b.strs(val, "topics")
		k.TopicPattern = b.str(val, "topic_pattern")
		k.ConsumerGroup = b.str(val, "consumer_group")
		k.Assignment = orDefault(b.str(val, "assignment"), "input", n.Component, "assignment")
		k.StartFrom = b.str(val, "start_from")
		k.StopAt = b.str(val, "stop_at")
		k.SeedBrokers = b.brokers(yamlsrc.Strings(val, "seed_brokers"))
		if _, wm := yamlsrc.Get(val, "watermark"); wm != nil {
			_ = wm.Decode(&k.Watermark)
		}
		b.table(k, val)
		if t := k.Table; t != nil {
			fill(&k.Topics, splitList(t.Options[schema.OptTopic], ";"))
			fillString(&k.TopicPattern, t.Options[schema.OptTopicPattern])
			fillString(&k.ConsumerGroup, t.Options[schema.OptGroupID])
			fill(&k.SeedBrokers, b.brokers(splitList(t.Options[schema.OptBootstrapServers], ",")))
			fillString(&k.StartFrom, flinkStartup(t.Options["scan.startup.mode"]))
		}
		fillString(&k.StartFrom, specDefault("input", n.Component, "start_from"))
		fillString(&k.StopAt, specDefault("input", n.Component, "stop_at"))
	case "kafka_sink":
		if section != SectionOutput && section != SectionOutputResources {
			return nil
		}
		k.Topic = b.str(val, "topic")
		k.DeliveryGuarantee = b.str(val, "delivery_guarantee")
		k.SeedBrokers = b.brokers(yamlsrc.Strings(val, "seed_brokers"))
		b.table(k, val)
		if t := k.Table; t != nil {
			fillString(&k.Topic, t.Options[schema.OptTopic])
			fill(&k.SeedBrokers, b.brokers(splitList(t.Options[schema.OptBootstrapServers], ",")))
			fillString(&k.DeliveryGuarantee, strings.ReplaceAll(t.Options[schema.OptDeliveryGuarantee], "-", "_"))
		}
		fillString(&k.DeliveryGuarantee, specDefault("output", n.Component, "delivery_guarantee"))
	case "table_decode", "table_encode", "cel":
		k.Format = b.str(val, "format")
		k.OnError = b.str(val, "on_error")
		b.table(k, val)
		if t := k.Table; t != nil && k.Format == "" {
			k.Format = t.Options["format"]
			fillString(&k.Format, t.Options["value.format"])
		}
		if n.Component != "cel" {
			fillString(&k.OnError, specDefault("processor", n.Component, "on_error"))
		}
	case "event_window":
		if err := val.Decode(&k.Window); err != nil {
			return nil
		}
	default:
		return nil
	}
	return k
}

// table sets the table of the component config val, or the error that
// keeps it from resolving.
func (b *builder) table(k *Kafka, val *yaml.Node) {
	def, err := catalog.Resolve(b.s, val, b.env)
	switch {
	case err != nil:
		k.TableError = err.Error()
	case def != nil:
		k.Table = def.Table
	}
}

// brokers expands environment variables in seed broker entries and splits
// comma-separated ones, as the Kafka components do.
func (b *builder) brokers(list []string) []string {
	var out []string
	for _, s := range list {
		s = yamlsrc.ExpandEnv(s, b.lookup)
		for _, one := range strings.Split(s, ",") {
			if one = strings.TrimSpace(one); one != "" {
				out = append(out, one)
			}
		}
	}
	return out
}

// str is the scalar field name of m with environment variables expanded,
// as the component sees it.
func (b *builder) str(m *yaml.Node, name string) string {
	return yamlsrc.ExpandEnv(yamlsrc.String(m, name), b.lookup)
}

// strs is the list field name of m, environment variables expanded.
func (b *builder) strs(m *yaml.Node, name string) []string {
	list := yamlsrc.Strings(m, name)
	for i, s := range list {
		list[i] = yamlsrc.ExpandEnv(s, b.lookup)
	}
	return list
}

func (b *builder) lookup(k string) (string, bool) {
	if b.env.LookupEnv == nil {
		return "", false
	}
	return b.env.LookupEnv(k)
}

// flinkStartup maps scan.startup.mode to start_from.
func flinkStartup(mode string) string {
	switch mode {
	case "earliest-offset":
		return "earliest"
	case "latest-offset":
		return "latest"
	case "group-offsets":
		return "committed"
	case "timestamp":
		return "timestamp"
	case "specific-offsets":
		return "offsets"
	}
	return ""
}

func splitList(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func fill(dst *[]string, v []string) {
	if len(*dst) == 0 {
		*dst = v
	}
}

func fillString(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

func orDefault(v, kind, component, field string) string {
	if v != "" {
		return v
	}
	return specDefault(kind, component, field)
}

var defaults struct {
	once sync.Once
	// byComponent maps "kind/component" to field name to its default as
	// a string (string defaults only).
	byComponent map[string]map[string]string
}

// specDefault is the default of a string field of a component, read from
// its spec (the same as `connectd list` and the docs), "" when it has none.
func specDefault(kind, component, field string) string {
	defaults.once.Do(func() {
		defaults.byComponent = map[string]map[string]string{}
		env := service.GlobalEnvironment()
		collect := func(kind string) func(string, *service.ConfigView) {
			return func(name string, view *service.ConfigView) {
				if !slices.Contains([]string{"kafka_source", "kafka_sink", "table_decode", "table_encode"}, name) {
					return
				}
				td, err := view.TemplateData()
				if err != nil {
					return
				}
				fields := map[string]string{}
				for _, f := range td.Fields {
					var v any
					if f.DefaultMarshalled == "" || json.Unmarshal([]byte(f.DefaultMarshalled), &v) != nil {
						continue
					}
					if s, ok := v.(string); ok {
						fields[f.FullName] = s
					}
				}
				defaults.byComponent[kind+"/"+name] = fields
			}
		}
		env.WalkInputs(collect("input"))
		env.WalkOutputs(collect("output"))
		env.WalkProcessors(collect("processor"))
	})
	return defaults.byComponent[kind+"/"+component][field]
}

// pairExactlyOnce links each kafka_source with a consumer group to each
// kafka_sink with delivery_guarantee exactly_once on the same cluster: the
// sink commits the source's offsets in its transactions
// (internal/txnoffsets pairs them at run time the same way: a group, and
// the same seed brokers).
func (b *builder) pairExactlyOnce() {
	for _, src := range b.g.Nodes {
		if src.Component != "kafka_source" || src.Kafka == nil || src.Kafka.ConsumerGroup == "" {
			continue
		}
		for _, sink := range b.g.Nodes {
			if sink.Component != "kafka_sink" || sink.Kafka == nil || sink.Kafka.DeliveryGuarantee != DeliveryExactlyOnce {
				continue
			}
			if !slices.Equal(normalise(src.Kafka.SeedBrokers), normalise(sink.Kafka.SeedBrokers)) {
				continue
			}
			b.g.Edges = append(b.g.Edges, Edge{
				From: src.ID, To: sink.ID, Kind: EdgeExactlyOnce,
				Label: fmt.Sprintf("source offsets of group %s commit in the sink's transactions", src.Kafka.ConsumerGroup),
			})
		}
	}
}

// normalise is txnoffsets' comparison of seed brokers: lower case,
// trimmed, sorted, without duplicates.
func normalise(brokers []string) []string {
	out := make([]string, len(brokers))
	for i, b := range brokers {
		out[i] = strings.ToLower(strings.TrimSpace(b))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
