package kafkasource

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/speclint"
)

// Configs brought from Redpanda Connect (its `kafka_franz`, `kafka` and
// `redpanda` inputs) fail lint and run with a hint that says what connectd
// calls the same thing: docs/migrating-from-redpanda-connect.md.

// redpandaInputs are Redpanda Connect's Kafka inputs.
var redpandaInputs = []string{"kafka", "kafka_franz", "redpanda", "redpanda_common"}

// compatHints are the kafka_source hints for Redpanda Connect's fields.
func compatHints() map[string]string {
	h := kafkaconn.CompatHints()
	for k, v := range map[string]string{
		"regexp_topics": fmt.Sprintf("connectd reads a regular expression from `%s` (Redpanda Connect's `regexp_topics: true` with `topics`)",
			fieldTopicPattern),
		"start_from_oldest": fmt.Sprintf("write `%s: %s` (true) or `%s: %s` (false)", fieldStartFrom, StartEarliest, fieldStartFrom, StartLatest),
		"start_offset": fmt.Sprintf("write `%s` (%s, %s, %s, %s or %s)",
			fieldStartFrom, StartEarliest, StartLatest, StartCommitted, StartTimestamp, StartOffsets),
		"transaction_isolation_level": fmt.Sprintf("write `%s` (%s, the default, or %s)", fieldIsolationLevel, ReadCommitted, ReadUncommitted),
		"batching":                    fmt.Sprintf("kafka_source hands out batches of up to `%s` records as they are fetched; a Benthos batching policy goes on the output", fieldBatchSize),
		"instance_id":                 fmt.Sprintf("write `%s` (static group membership)", fieldGroupInstanceID),
		"heartbeat_interval":          fmt.Sprintf("write `%s`", fieldHeartbeatInterval),
		"session_timeout":             fmt.Sprintf("write `%s`", fieldSessionTimeout),
		"auto_replay_nacks":           "kafka_source always delivers a rejected batch again, before anything newer; route records that must not be retried with `catch` or `switch` instead",
	} {
		h[k] = v
	}
	return h
}

func init() {
	speclint.RegisterFieldHints("kafka_source", compatHints())
	for _, n := range redpandaInputs {
		speclint.RegisterNameHint(speclint.Input, n,
			"did you mean kafka_source? (connectd's Kafka input; Redpanda Connect's fields map as docs/migrating-from-redpanda-connect.md shows)")
	}
}

// illegalTopic matches a topic name that Kafka refuses for an ASCII
// character it does not allow (it allows letters, digits, '.', '_' and
// '-'). Other characters are left to the brokers: Kafka refuses them too,
// but some Kafka-compatible brokers (and kfake) accept them.
var illegalTopic = regexp.MustCompile(`[\x00-\x2c/:-@\[-^` + "`" + `{-\x7f]`)

// maxTopicLen is the longest topic name Kafka accepts, in bytes.
const maxTopicLen = 249

// partitionForm is Redpanda Connect's `topic:partition` and
// `topic:first-last` in `topics`.
var partitionForm = regexp.MustCompile(`^([a-zA-Z0-9._-]+):([0-9]+)(?:-([0-9]+))?$`)

// topicNameProblems reports names in the entries of `topics` (each may
// hold several, comma-separated) that Kafka refuses, which would otherwise
// fail only when the input connects; Redpanda Connect's `topic:0-3` form
// gets the `partitions` field that reads the same.
func topicNameProblems(entries []string) []error {
	var errs []error
	for i, e := range entries {
		for _, t := range splitTopics([]string{e}) {
			if err := topicNameProblem(i, t); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

func topicNameProblem(i int, t string) error {
	if !illegalTopic.MatchString(t) && len(t) <= maxTopicLen && t != "." && t != ".." {
		return nil
	}
	if m := partitionForm.FindStringSubmatch(t); m != nil {
		first, _ := strconv.Atoi(m[2])
		last := first
		if m[3] != "" {
			last, _ = strconv.Atoi(m[3])
		}
		if last >= first && last-first < 1024 {
			parts := make([]string, 0, last-first+1)
			for p := first; p <= last; p++ {
				parts = append(parts, strconv.Itoa(p))
			}
			return fmt.Errorf("field %s[%d]: %q is Redpanda Connect's topic:partitions form, not a topic name; "+
				"did you mean `%s: { %s: [ %s ] }` (instead of %s)?", fieldTopics, i, t, fieldPartitions, m[1], strings.Join(parts, ", "), fieldTopics)
		}
	}
	return fmt.Errorf("field %s[%d]: %q is not a legal Kafka topic name (1 to %d letters, digits, '.', '_' or '-')",
		fieldTopics, i, t, maxTopicLen)
}
