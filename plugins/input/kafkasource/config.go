package kafkasource

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
)

// StartFrom says where reading begins for a partition the first time a
// process connects. Flink: `scan.startup.mode`.
type StartFrom string

const (
	// StartEarliest starts at the log start offset (Flink `earliest-offset`).
	StartEarliest StartFrom = "earliest"
	// StartLatest starts at the end offset as seen at connect time (Flink
	// `latest-offset`). The end offset is resolved once to a concrete number,
	// so a reconnect resumes rather than skipping what arrived meanwhile.
	StartLatest StartFrom = "latest"
	// StartCommitted starts at the consumer group's committed offset (Flink
	// `group-offsets`), falling back to CommittedFallback when there is none.
	StartCommitted StartFrom = "committed"
)

// CommittedFallback says what to do for a partition without a usable
// committed offset (none committed, or out of range). Flink:
// `properties.auto.offset.reset`.
type CommittedFallback string

const (
	// FallbackEarliest starts at the log start offset.
	FallbackEarliest CommittedFallback = "earliest"
	// FallbackLatest starts at the end offset.
	FallbackLatest CommittedFallback = "latest"
	// FallbackError refuses to start and names group, topic and partition.
	FallbackError CommittedFallback = "error"
)

// IsolationLevel says whether records of open or aborted transactions are
// returned. Flink: `properties.isolation.level`.
type IsolationLevel string

const (
	// ReadCommitted returns only records of committed transactions.
	ReadCommitted IsolationLevel = "read_committed"
	// ReadUncommitted returns every record, including those of open or
	// aborted transactions.
	ReadUncommitted IsolationLevel = "read_uncommitted"
)

// Config is the typed configuration of a kafka_source input.
type Config struct {
	// Conn holds the shared connection settings (brokers, TLS, SASL, ...).
	Conn kafkaconn.Config
	// Topics to read, every partition of each. Comma-separated entries are
	// split. No default.
	Topics []string
	// ConsumerGroup receives the committed offsets. No default.
	ConsumerGroup string
	// StartFrom: default StartCommitted.
	StartFrom StartFrom
	// CommittedFallback: default FallbackEarliest.
	CommittedFallback CommittedFallback
	// IsolationLevel: default ReadCommitted.
	IsolationLevel IsolationLevel
	// CommitPeriod between offset commits. Default 5s.
	CommitPeriod time.Duration
	// CheckpointLimit is the number of fetched, not yet acknowledged records
	// per partition at which fetching that partition pauses. Default 1024.
	CheckpointLimit int
	// BatchSize is the maximum number of records per batch. Default 1024.
	BatchSize int
	// FetchMaxWait is how long the broker may hold a fetch open. Default
	// 500ms.
	FetchMaxWait time.Duration
}

// configFromParsed reads a parsed kafka_source config into a Config and
// validates it.
func configFromParsed(conf *service.ParsedConfig) (Config, error) {
	var (
		c   Config
		err error
	)
	if c.Conn, err = kafkaconn.FromParsed(conf); err != nil {
		return c, err
	}
	topics, err := conf.FieldStringList(fieldTopics)
	if err != nil {
		return c, err
	}
	c.Topics = splitTopics(topics)
	if c.ConsumerGroup, err = conf.FieldString(fieldConsumerGroup); err != nil {
		return c, err
	}
	s, err := conf.FieldString(fieldStartFrom)
	if err != nil {
		return c, err
	}
	c.StartFrom = StartFrom(s)
	if s, err = conf.FieldString(fieldCommittedFallback); err != nil {
		return c, err
	}
	c.CommittedFallback = CommittedFallback(s)
	if s, err = conf.FieldString(fieldIsolationLevel); err != nil {
		return c, err
	}
	c.IsolationLevel = IsolationLevel(s)
	if c.CommitPeriod, err = conf.FieldDuration(fieldCommitPeriod); err != nil {
		return c, err
	}
	if c.CheckpointLimit, err = conf.FieldInt(fieldCheckpointLimit); err != nil {
		return c, err
	}
	if c.BatchSize, err = conf.FieldInt(fieldBatchSize); err != nil {
		return c, err
	}
	if c.FetchMaxWait, err = conf.FieldDuration(fieldFetchMaxWait); err != nil {
		return c, err
	}
	return c, c.validate()
}

// splitTopics splits comma-separated entries, trims blanks and drops empty
// names and duplicates, keeping the first occurrence's order.
func splitTopics(entries []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		for _, t := range strings.Split(e, ",") {
			if t = strings.TrimSpace(t); t != "" && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// validate collects every problem with the settings. The lint rule in Spec
// checks the same things at lint time; this runs again in the constructor
// because linting can be skipped.
func (c Config) validate() error {
	var errs []error
	if len(c.Topics) == 0 {
		errs = append(errs, fmt.Errorf("field %s: at least one topic is required", fieldTopics))
	}
	if strings.TrimSpace(c.ConsumerGroup) == "" {
		errs = append(errs, fmt.Errorf("field %s: a group id is required (offsets are committed to it)", fieldConsumerGroup))
	}
	switch c.StartFrom {
	case StartEarliest, StartLatest, StartCommitted:
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want one of %s, %s, %s)",
			fieldStartFrom, c.StartFrom, StartEarliest, StartLatest, StartCommitted))
	}
	switch c.CommittedFallback {
	case FallbackEarliest, FallbackLatest, FallbackError:
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want one of %s, %s, %s)",
			fieldCommittedFallback, c.CommittedFallback, FallbackEarliest, FallbackLatest, FallbackError))
	}
	switch c.IsolationLevel {
	case ReadCommitted, ReadUncommitted:
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want one of %s, %s)",
			fieldIsolationLevel, c.IsolationLevel, ReadCommitted, ReadUncommitted))
	}
	if c.CommitPeriod <= 0 {
		errs = append(errs, fmt.Errorf("field %s: must be positive, got %v", fieldCommitPeriod, c.CommitPeriod))
	}
	if c.FetchMaxWait <= 0 {
		errs = append(errs, fmt.Errorf("field %s: must be positive, got %v", fieldFetchMaxWait, c.FetchMaxWait))
	}
	if c.BatchSize < 1 {
		errs = append(errs, fmt.Errorf("field %s: must be at least 1, got %d", fieldBatchSize, c.BatchSize))
	}
	if c.CheckpointLimit < 1 {
		errs = append(errs, fmt.Errorf("field %s: must be at least 1, got %d", fieldCheckpointLimit, c.CheckpointLimit))
	} else if c.BatchSize > c.CheckpointLimit {
		errs = append(errs, fmt.Errorf("field %s: %d is below %s %d; one batch could exceed the limit, raise %s to at least %d",
			fieldCheckpointLimit, c.CheckpointLimit, fieldBatchSize, c.BatchSize, fieldCheckpointLimit, c.BatchSize))
	}
	return errors.Join(errs...)
}

// clientOpts returns the consumer options of this config, to be added to the
// connection options.
func (c Config) clientOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ConsumeResetOffset(c.resetOffset()),
		kgo.FetchMaxWait(c.FetchMaxWait),
	}
	if c.IsolationLevel == ReadCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	} else {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	}
	return opts
}

// resetOffset is where the client goes when a fetch position turns out to be
// out of range while running (for example deleted by retention).
func (c Config) resetOffset() kgo.Offset {
	switch c.CommittedFallback {
	case FallbackLatest:
		return kgo.NewOffset().AtEnd()
	case FallbackError:
		return kgo.NoResetOffset()
	default:
		return kgo.NewOffset().AtStart()
	}
}
