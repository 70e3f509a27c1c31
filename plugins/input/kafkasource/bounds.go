package kafkasource

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// This file parses the settings that bound a read: start and stop
// timestamps and per-partition offsets, as YAML gives them.

// maxReaders bounds the readers field: each reader is a client with its own
// connections.
const maxReaders = 256

// timestampLayout is RFC 3339 with optional fractional seconds.
const timestampLayout = time.RFC3339Nano

// flinkOffsetsPattern matches Flink's specific-offsets string form,
// `partition:0,offset:42;partition:1,offset:300`.
var flinkOffsetsPattern = regexp.MustCompile(`^\s*partition\s*:\s*([0-9]+)\s*,\s*offset\s*:\s*([0-9]+)\s*$`)

// parseTimestamp reads a point in time given as milliseconds since the Unix
// epoch (a YAML integer or a string of digits) or as an RFC 3339 string.
func parseTimestamp(field string, v any) (int64, error) {
	switch v := v.(type) {
	case int:
		return checkMillis(field, int64(v))
	case int64:
		return checkMillis(field, v)
	case uint64:
		return checkMillis(field, int64(v))
	case float64:
		if v != float64(int64(v)) {
			return 0, fmt.Errorf("field %s: %v is not a whole number of milliseconds", field, v)
		}
		return checkMillis(field, int64(v))
	case time.Time:
		// YAML decodes an unquoted RFC 3339 time itself.
		return checkMillis(field, v.UnixMilli())
	case string:
		s := strings.TrimSpace(v)
		if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
			return checkMillis(field, ms)
		}
		t, err := time.Parse(timestampLayout, s)
		if err != nil {
			return 0, fmt.Errorf("field %s: expected milliseconds since the Unix epoch or an RFC 3339 time such as 2024-05-01T00:00:00Z, got %q: %w", field, v, err)
		}
		return checkMillis(field, t.UnixMilli())
	default:
		return 0, fmt.Errorf("field %s: expected milliseconds since the Unix epoch or an RFC 3339 time such as 2024-05-01T00:00:00Z, got %T %v", field, v, v)
	}
}

func checkMillis(field string, ms int64) (int64, error) {
	if ms < 0 {
		return 0, fmt.Errorf("field %s: must not be before the Unix epoch, got %d", field, ms)
	}
	return ms, nil
}

func timestampFromParsed(conf *service.ParsedConfig, field string) (int64, error) {
	if !conf.Contains(field) {
		return -1, nil
	}
	v, err := conf.FieldAny(field)
	if err != nil {
		return -1, err
	}
	if v == nil {
		return -1, nil
	}
	return parseTimestamp(field, v)
}

// parseOffsets reads per-topic offsets. Each topic maps either to a map of
// partition to offset, or to Flink's string form
// `partition:0,offset:42;partition:1,offset:300`. A key that maps to an
// offset itself is `topic:partition`, or a partition alone, which belongs to
// the single topic read: its topic is left empty for resolveOffsetTopics.
func parseOffsets(field string, m map[string]any) (map[topicPartition]int64, error) {
	out := map[topicPartition]int64{}
	var errs []string
	topics := make([]string, 0, len(m))
	for t := range m {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	add := func(topic, p string, o any) {
		at := field + "." + topic
		if topic == "" {
			at = field
		}
		part, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil || part < 0 {
			errs = append(errs, fmt.Sprintf("field %s: partition %q is not a partition number", at, p))
			return
		}
		off, ok := toOffset(o)
		if !ok {
			errs = append(errs, fmt.Sprintf("field %s: offset %v of partition %d is not a non-negative integer", at, o, part))
			return
		}
		tp := topicPartition{topic: topic, partition: int32(part)}
		if _, dup := out[tp]; dup {
			errs = append(errs, fmt.Sprintf("field %s: partition %d is listed twice", at, part))
			return
		}
		out[tp] = off
	}
	for _, topic := range topics {
		switch v := m[topic].(type) {
		case string:
			for _, entry := range strings.Split(v, ";") {
				if strings.TrimSpace(entry) == "" {
					continue
				}
				sub := flinkOffsetsPattern.FindStringSubmatch(entry)
				if sub == nil {
					errs = append(errs, fmt.Sprintf("field %s.%s: %q is not of the form partition:<n>,offset:<n>", field, topic, entry))
					continue
				}
				add(topic, sub[1], sub[2])
			}
		case map[string]any:
			for p, o := range v {
				add(topic, p, o)
			}
		case map[any]any:
			for p, o := range v {
				add(topic, fmt.Sprint(p), o)
			}
		case int, int64, uint64, float64:
			// Kafka topic names cannot hold ':', so the last one splits.
			if i := strings.LastIndexByte(topic, ':'); i >= 0 {
				add(topic[:i], topic[i+1:], v)
			} else {
				add("", topic, v)
			}
		default:
			errs = append(errs, fmt.Sprintf("field %s.%s: expected a map of partition to offset or a string such as \"partition:0,offset:42;partition:1,offset:300\", got %T", field, topic, v))
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

func toOffset(v any) (int64, bool) {
	var o int64
	switch v := v.(type) {
	case int:
		o = int64(v)
	case int64:
		o = v
	case uint64:
		o = int64(v)
	case float64:
		if v != float64(int64(v)) {
			return 0, false
		}
		o = int64(v)
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, false
		}
		o = n
	default:
		return 0, false
	}
	return o, o >= 0
}

func offsetsFromParsed(conf *service.ParsedConfig, field string) (map[topicPartition]int64, error) {
	if !conf.Contains(field) {
		return nil, nil
	}
	v, err := conf.FieldAny(field)
	if err != nil || v == nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("field %s: expected a map of topic to offsets, got %T", field, v)
	}
	return parseOffsets(field, m)
}

// resolveOffsetTopics gives offsets listed by partition alone (parseOffsets)
// the single topic that the config reads.
func (c *Config) resolveOffsetTopics() []error {
	var errs []error
	for _, f := range []struct {
		name string
		m    map[topicPartition]int64
	}{{fieldStartOffsets, c.StartOffsets}, {fieldStopOffsets, c.StopOffsets}} {
		for _, tp := range sortedPartitions(f.m) {
			if tp.topic != "" {
				continue
			}
			off := f.m[tp]
			delete(f.m, tp)
			if len(c.Topics) != 1 {
				errs = append(errs, fmt.Errorf("field %s.%d: a partition without a topic needs exactly one topic in %s; write \"<topic>:%d\"",
					f.name, tp.partition, fieldTopics, tp.partition))
				continue
			}
			tp.topic = c.Topics[0]
			if _, dup := f.m[tp]; dup {
				errs = append(errs, fmt.Errorf("field %s: partition %d of %s is listed twice", f.name, tp.partition, tp.topic))
				continue
			}
			f.m[tp] = off
		}
	}
	return errs
}

// modeParameter checks a field that belongs to one value of a mode field
// (start_timestamp to start_from: timestamp, ...): required with that value,
// refused with any other.
func modeParameter(field, modeField string, isSet bool, mode, needs string) error {
	switch {
	case mode == needs && !isSet:
		what := ""
		if strings.HasSuffix(field, "offsets") {
			what = " (at least one partition)"
		}
		return fmt.Errorf("field %s: required with %s: %s%s", field, modeField, needs, what)
	case mode != needs && isSet:
		return fmt.Errorf("field %s: only used with %s: %s, which is %s", field, modeField, needs, mode)
	}
	return nil
}

// validateBounds checks the start and stop settings against each other and
// against the topics.
func (c Config) validateBounds() []error {
	var errs []error
	for _, p := range []struct {
		field, modeField string
		isSet            bool
		mode, needs      string
	}{
		{fieldStartTimestamp, fieldStartFrom, c.StartTimestamp >= 0, string(c.StartFrom), string(StartTimestamp)},
		{fieldStartOffsets, fieldStartFrom, len(c.StartOffsets) > 0, string(c.StartFrom), string(StartOffsets)},
		{fieldStopTimestamp, fieldStopAt, c.StopTimestamp >= 0, string(c.StopAt), string(StopTimestamp)},
		{fieldStopOffsets, fieldStopAt, len(c.StopOffsets) > 0, string(c.StopAt), string(StopOffsets)},
		{fieldStopGroup, fieldStopAt, c.StopGroup != "", string(c.StopAt), string(StopCommitted)},
	} {
		if err := modeParameter(p.field, p.modeField, p.isSet, p.mode, p.needs); err != nil {
			errs = append(errs, err)
		}
	}
	if c.StopGroup != "" && c.StopGroup == c.ConsumerGroup {
		errs = append(errs, fmt.Errorf("field %s: %q is also %s, where this input resumes from and commits: the read would end where it starts; "+
			"leave %s unset (or give it another group)", fieldStopGroup, c.StopGroup, fieldConsumerGroup, fieldConsumerGroup))
	}
	if c.StartFrom == StartTimestamp && c.StopAt == StopTimestamp && c.StartTimestamp >= 0 && c.StopTimestamp >= 0 && c.StopTimestamp < c.StartTimestamp {
		errs = append(errs, fmt.Errorf("field %s: %d is before %s %d", fieldStopTimestamp, c.StopTimestamp, fieldStartTimestamp, c.StartTimestamp))
	}
	topics := map[string]bool{}
	for _, t := range c.Topics {
		topics[t] = true
	}
	for t := range c.Partitions {
		topics[t] = true
	}
	for _, f := range []struct {
		name string
		m    map[topicPartition]int64
	}{{fieldStartOffsets, c.StartOffsets}, {fieldStopOffsets, c.StopOffsets}} {
		seen := map[string]bool{}
		for _, tp := range sortedPartitions(f.m) {
			if !seen[tp.topic] && len(topics) > 0 && !topics[tp.topic] {
				seen[tp.topic] = true
				errs = append(errs, fmt.Errorf("field %s: topic %q is not in %s", f.name, tp.topic, fieldTopics))
			}
			if c.TopicPattern != nil && !seen[tp.topic] && !c.subscribed(tp.topic) {
				seen[tp.topic] = true
				errs = append(errs, fmt.Errorf("field %s: topic %q does not match %s", f.name, tp.topic, fieldTopicPattern))
			}
		}
	}
	return errs
}

func sortedPartitions[V any](m map[topicPartition]V) []topicPartition {
	out := make([]topicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	sortPartitions(out)
	return out
}

func sortPartitions(tps []topicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].topic != tps[j].topic {
			return tps[i].topic < tps[j].topic
		}
		return tps[i].partition < tps[j].partition
	})
}

// regexpFromParsed compiles a regular expression field that must match a
// whole topic name; nil if the field is unset or empty.
func regexpFromParsed(conf *service.ParsedConfig, field string) (*regexp.Regexp, error) {
	if !conf.Contains(field) {
		return nil, nil
	}
	s, err := conf.FieldString(field)
	if err != nil || s == "" {
		return nil, err
	}
	re, err := regexp.Compile("^(?:" + s + ")$")
	if err != nil {
		return nil, fmt.Errorf("field %s: %q is not a regular expression (RE2 syntax): %w", field, s, err)
	}
	return re, nil
}

// partitionsFromParsed reads explicit partitions: a map of topic to a list
// of partition numbers.
func partitionsFromParsed(conf *service.ParsedConfig) (map[string][]int32, error) {
	if !conf.Contains(fieldPartitions) {
		return nil, nil
	}
	v, err := conf.FieldAny(fieldPartitions)
	if err != nil || v == nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("field %s: expected a map of topic to a list of partitions, got %T", fieldPartitions, v)
	}
	out := make(map[string][]int32, len(m))
	var errs []string
	for _, topic := range slices.Sorted(maps.Keys(m)) {
		list, ok := m[topic].([]any)
		if !ok || len(list) == 0 {
			errs = append(errs, fmt.Sprintf("field %s.%s: expected a non-empty list of partition numbers, got %v", fieldPartitions, topic, m[topic]))
			continue
		}
		seen := map[int64]bool{}
		for _, e := range list {
			p, ok := toOffset(e)
			if !ok || p > math.MaxInt32 || seen[p] {
				errs = append(errs, fmt.Sprintf("field %s.%s: %v is not a partition number, or is listed twice", fieldPartitions, topic, e))
				continue
			}
			seen[p] = true
			out[topic] = append(out[topic], int32(p))
		}
		slices.Sort(out[topic])
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}
