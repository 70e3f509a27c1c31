package kafkasource

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkaconn"
	"github.com/connectd/connectd/internal/speclint"
	"github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
)

// StartFrom says where reading begins for a partition that has no offset
// committed in the consumer group (or for every partition without a group,
// or with reset_offsets). A partition with a committed offset starts there
// whatever StartFrom says: the committed offsets are the pipeline's state,
// as a Flink job restored from a checkpoint ignores `scan.startup.mode`.
// Flink: `scan.startup.mode`.
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
	// It needs a consumer group.
	StartCommitted StartFrom = "committed"
	// StartTimestamp starts at the first offset whose record timestamp is at
	// or after Config.StartTimestamp, else at the end offset (Flink
	// `timestamp`, `scan.startup.timestamp-millis`).
	StartTimestamp StartFrom = "timestamp"
	// StartOffsets starts at the offsets of Config.StartOffsets; unlisted
	// partitions start at CommittedFallback (Flink `specific-offsets`,
	// `scan.startup.specific-offsets`).
	StartOffsets StartFrom = "offsets"
)

// StopAt says where a bounded read ends. Stop offsets are exclusive and are
// resolved once, when the input first connects. Flink: `scan.bounded.mode`.
type StopAt string

const (
	// StopNone reads without end (Flink `unbounded`).
	StopNone StopAt = "none"
	// StopLatest stops at the end offset seen at connect: the high
	// watermark, or the last stable offset under read_committed (Flink
	// `latest-offset`).
	StopLatest StopAt = "latest"
	// StopTimestamp stops before the first record whose timestamp is at or
	// after Config.StopTimestamp (Flink `timestamp`,
	// `scan.bounded.timestamp-millis`).
	StopTimestamp StopAt = "timestamp"
	// StopOffsets stops at the offsets of Config.StopOffsets; unlisted
	// partitions stop at latest (Flink `specific-offsets`,
	// `scan.bounded.specific-offsets`).
	StopOffsets StopAt = "offsets"
	// StopCommitted stops at the offsets committed in Config.StopGroup
	// when the input first connects (Flink `group-offsets` with
	// `properties.group.id`): a bounded read up to where another consumer
	// group is. A partition without an offset committed there is an
	// error, as in Flink.
	StopCommitted StopAt = "committed"
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

// Assignment says how a process gets its partitions.
type Assignment string

const (
	// AssignmentEnumerator: the process lists the partitions itself and
	// reads all of them, or its shard (as Flink's KafkaSource).
	AssignmentEnumerator Assignment = "enumerator"
	// AssignmentGroup: each reader joins the consumer group, and the group
	// coordinator spreads the partitions over the readers of every process.
	AssignmentGroup Assignment = "group"
)

// Config is the typed configuration of a kafka_source input.
type Config struct {
	// Conn holds the shared connection settings (brokers, TLS, SASL, ...).
	Conn kafkaconn.Config
	// Topics to read, every partition of each. Comma-separated entries are
	// split. Exactly one of Topics, TopicPattern and Partitions is set.
	Topics []string
	// TopicPattern selects the topics whose whole name it matches; nil if
	// unset.
	TopicPattern *regexp.Regexp
	// TopicExclude drops topics that TopicPattern selects and whose whole
	// name it matches; nil if unset.
	TopicExclude *regexp.Regexp
	// Partitions are explicit partitions to read, per topic; nil if unset.
	Partitions map[string][]int32
	// DiscoveryInterval between metadata scans for new partitions and
	// topics; 0 turns discovery off. Default 5m.
	DiscoveryInterval time.Duration
	// ConsumerGroup receives the committed offsets, and a partition with an
	// offset committed in it starts there. "" (the default): no group,
	// nothing is committed, and every start begins at StartFrom.
	ConsumerGroup string
	// ResetOffsets applies StartFrom to every partition at the start of
	// the process, ignoring and overwriting the group's committed offsets
	// (each move is logged). Default false.
	ResetOffsets bool
	// StartFrom: default StartCommitted.
	StartFrom StartFrom
	// CommittedFallback: default FallbackEarliest.
	CommittedFallback CommittedFallback
	// IsolationLevel: default ReadCommitted.
	IsolationLevel IsolationLevel
	// CommitPeriod between offset commits. Default 5s.
	CommitPeriod time.Duration
	// CheckpointLimit is the number of fetched, not yet acknowledged records
	// per partition at which fetching that partition pauses. Default 8192
	// (defaultCheckpointLimit).
	CheckpointLimit int
	// MaxUnackedBytes bounds the weight of the records fetched and not yet
	// acknowledged, over all partitions of the input (budget.go): each
	// counts its key, value and headers plus recordOverhead. Default
	// 32 MiB (defaultMaxUnackedBytes).
	MaxUnackedBytes int64
	// BatchSize is the maximum number of records per batch. Default 1024.
	BatchSize int
	// FetchMaxWait is how long the broker may hold a fetch open. Default
	// 500ms.
	FetchMaxWait time.Duration
	// Metadata selects the metadata set on each message. Default: all.
	Metadata metaSet
	// StartTimestamp is the time for StartTimestamp, in milliseconds since
	// the Unix epoch; -1 if unset.
	StartTimestamp int64
	// StartOffsets are the start offsets for StartOffsets.
	StartOffsets map[topicPartition]int64
	// StopAt: default StopNone.
	StopAt StopAt
	// StopGroup is the consumer group whose committed offsets end a read
	// with StopAt StopCommitted; it is only read, never joined or
	// committed to.
	StopGroup string
	// StopTimestamp is the time for StopTimestamp, in milliseconds since
	// the Unix epoch; -1 if unset.
	StopTimestamp int64
	// StopOffsets are the exclusive stop offsets for StopOffsets.
	StopOffsets map[topicPartition]int64
	// Readers is the number of in-process readers, each with its own
	// client and fetch loop. Default 1.
	Readers int
	// Shard is this process's share of the splits. Default {0, 1}: all.
	Shard Shard
	// Assignment: default AssignmentEnumerator.
	Assignment Assignment
	// SessionTimeout of a group member (group mode). Default 45s.
	SessionTimeout time.Duration
	// GroupProtocol of group mode. Default GroupProtocolClassic.
	GroupProtocol GroupProtocol
	// HeartbeatInterval of a group member (group mode, classic); 0: a
	// third of SessionTimeout, at most 3s.
	HeartbeatInterval time.Duration
	// GroupInstanceID is the static member id of group mode (KIP-345);
	// reader i > 0 uses "<id>-<i>". "": dynamic membership.
	GroupInstanceID string
	// FetchMinBytes, FetchMaxBytes and FetchMaxPartitionBytes bound a
	// fetch, in bytes. Defaults 1, 50 MiB and 1 MiB, as the Java client.
	FetchMinBytes, FetchMaxBytes, FetchMaxPartitionBytes int
	// RackID is this process's rack, for fetching from the closest
	// replica (KIP-392). "": from leaders.
	RackID string
	// Table, when set, decodes each record into a row of a Flink table,
	// whose WITH options also set the subscription, brokers, group, start
	// and stop offsets and discovery interval (table.go). nil: no table.
	Table *table.Codec
	// OnError is the bad-record policy with a Table. Default fail.
	OnError table.Policy
	// Watermark configures event time and watermarks (field watermark, or
	// the table's WATERMARK FOR). Default: off.
	Watermark WatermarkConfig
	// PartitionMetrics is the cardinality of the per-partition metrics.
	// Default PartitionMetricsPartition.
	PartitionMetrics PartitionMetrics
}

// GroupProtocol is the consumer group protocol of group mode (field
// group_protocol).
type GroupProtocol string

const (
	// GroupProtocolClassic is the client-side assignment protocol
	// (JoinGroup/SyncGroup), cooperative-sticky.
	GroupProtocolClassic GroupProtocol = "classic"
	// GroupProtocolConsumer is KIP-848: the coordinator assigns.
	GroupProtocolConsumer GroupProtocol = "consumer"
)

// Shard is a static share of the splits: the process with Index of Count
// owns the splits whose owner slot, over Count x Readers slots, falls in
// [Index x Readers, (Index+1) x Readers).
type Shard struct {
	Index, Count int
}

// configFromParsed reads a parsed kafka_source config into a Config and
// validates it, reporting every problem at once. `connectd lint` runs it
// too (speclint.Register in spec.go).
// minFetchMaxWait is franz-go's lower bound of kgo.FetchMaxWait.
const minFetchMaxWait = 10 * time.Millisecond

func configFromParsed(conf *service.ParsedConfig) (Config, error) {
	var (
		c    Config
		err  error
		errs []error
	)
	codec, tset, err := tableFromParsed(conf)
	if err != nil {
		// The table's problems first: the rest depends on its settings.
		return c, err
	}
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// A duration that does not parse is reported once; the checks of
	// validate see its default instead.
	duration := func(field, def string) time.Duration {
		d, err := speclint.Duration(conf, field)
		if err != nil {
			errs = append(errs, err)
			d, _ = time.ParseDuration(def)
		}
		return d
	}
	str := func(field string) string {
		s, err := conf.FieldString(field)
		keep(err)
		return s
	}
	integer := func(path ...string) int {
		n, err := conf.FieldInt(path...)
		keep(err)
		return n
	}
	c.Conn, err = kafkaconn.FromParsedTable(conf, tset.conn)
	keep(err)
	if conf.Contains(fieldTopics) {
		topics, err := conf.FieldStringList(fieldTopics)
		keep(err)
		c.Topics = splitTopics(topics)
		errs = append(errs, topicNameProblems(topics)...)
	}
	if c.TopicPattern, err = regexpFromParsed(conf, fieldTopicPattern); err != nil {
		errs = append(errs, err)
	}
	if c.TopicExclude, err = regexpFromParsed(conf, fieldTopicExclude); err != nil {
		errs = append(errs, err)
	}
	if c.Partitions, err = partitionsFromParsed(conf); err != nil {
		errs = append(errs, err)
	}
	c.DiscoveryInterval = duration(fieldDiscoveryInterval, defaultDiscoveryInterval)
	if conf.Contains(fieldConsumerGroup) {
		c.ConsumerGroup = str(fieldConsumerGroup)
	}
	c.StartFrom = StartFrom(str(fieldStartFrom))
	c.CommittedFallback = CommittedFallback(str(fieldCommittedFallback))
	c.IsolationLevel = IsolationLevel(str(fieldIsolationLevel))
	c.CommitPeriod = duration(fieldCommitPeriod, defaultCommitPeriod)
	c.CheckpointLimit = integer(fieldCheckpointLimit)
	c.MaxUnackedBytes = int64(integer(fieldMaxUnackedBytes))
	c.BatchSize = integer(fieldBatchSize)
	metaNames, err := conf.FieldStringList(fieldMetadataKeys)
	keep(err)
	if c.Metadata, err = parseMetaSet(metaNames); err != nil {
		errs = append(errs, err)
	}
	c.FetchMaxWait = duration(fieldFetchMaxWait, defaultFetchMaxWait)
	c.StopAt = StopAt(str(fieldStopAt))
	if conf.Contains(fieldStopGroup) {
		c.StopGroup = str(fieldStopGroup)
	}
	c.Readers = integer(fieldReaders)
	c.Shard.Index = integer(fieldShard, fieldShardIndex)
	c.Shard.Count = integer(fieldShard, fieldShardCount)
	c.Assignment = Assignment(str(fieldAssignment))
	c.SessionTimeout = duration(fieldSessionTimeout, defaultSessionTimeout)
	c.GroupProtocol = GroupProtocol(str(fieldGroupProtocol))
	c.PartitionMetrics = PartitionMetrics(str(fieldPartitionMetrics))
	if d, set, err := speclint.OptionalDuration(conf, fieldHeartbeatInterval); set {
		c.HeartbeatInterval = d
	} else {
		keep(err)
	}
	c.GroupInstanceID = str(fieldGroupInstanceID)
	c.FetchMinBytes = integer(fieldFetchMinBytes)
	c.FetchMaxBytes = integer(fieldFetchMaxBytes)
	c.FetchMaxPartitionBytes = integer(fieldFetchMaxPartitionBytes)
	c.RackID = str(fieldRackID)
	c.ResetOffsets, err = conf.FieldBool(fieldResetOffsets)
	keep(err)
	if c.StartTimestamp, err = timestampFromParsed(conf, fieldStartTimestamp); err != nil {
		errs = append(errs, err)
	}
	if c.StopTimestamp, err = timestampFromParsed(conf, fieldStopTimestamp); err != nil {
		errs = append(errs, err)
	}
	if c.StartOffsets, err = offsetsFromParsed(conf, fieldStartOffsets); err != nil {
		errs = append(errs, err)
	}
	if c.StopOffsets, err = offsetsFromParsed(conf, fieldStopOffsets); err != nil {
		errs = append(errs, err)
	}
	if onError, _ := conf.FieldString(fieldOnError); codec == nil && onError != string(table.PolicyFail) {
		errs = append(errs, fmt.Errorf("field %s: only used with a table (fields %s, %s, %s)", fieldOnError, table.FieldTable, table.FieldCatalog, table.FieldDDL))
	}
	if codec != nil {
		c.Table = codec
		c.OnError = table.Policy(str(fieldOnError))
		if err := c.applyTable(tset); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, c.resolveOffsetTopics()...)
	var tbl *schema.Table
	if codec != nil {
		tbl = codec.Table()
	}
	wm, wmErrs := watermarkFromParsed(conf, tbl)
	c.Watermark = wm
	errs = append(errs, wmErrs...)
	if err := c.validate(); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
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

// validate collects every problem with the settings, each naming its field.
// configFromParsed runs it, for the constructor and for `connectd lint`.
func (c Config) validate() error {
	var errs []error
	switch n := btoi(len(c.Topics) > 0) + btoi(c.TopicPattern != nil) + btoi(c.Partitions != nil); {
	case n == 0 && c.Table != nil:
		// The table is where a Flink user looks: name its options.
		errs = append(errs, fmt.Errorf("table %s: option '%s' or '%s' is required (as in Flink: either 'topic' or 'topic-pattern' must be set); "+
			"field %s or %s may set it instead", c.Table.Table().Name, schema.OptTopic, schema.OptTopicPattern, fieldTopics, fieldTopicPattern))
	case n == 0:
		errs = append(errs, fmt.Errorf("field %s: at least one topic is required (or %s, or %s)", fieldTopics, fieldTopicPattern, fieldPartitions))
	case n > 1:
		errs = append(errs, fmt.Errorf("field %s: set only one of %s, %s and %s", fieldTopics, fieldTopics, fieldTopicPattern, fieldPartitions))
	}
	if c.TopicExclude != nil && c.TopicPattern == nil {
		errs = append(errs, fmt.Errorf("field %s: only used with %s", fieldTopicExclude, fieldTopicPattern))
	}
	switch c.Assignment {
	case AssignmentEnumerator:
	case AssignmentGroup:
		errs = append(errs, c.validateGroup()...)
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want %s or %s)", fieldAssignment, c.Assignment, AssignmentEnumerator, AssignmentGroup))
	}
	if c.SessionTimeout <= 0 {
		errs = append(errs, fmt.Errorf("field %s: must be positive, got %v", fieldSessionTimeout, c.SessionTimeout))
	}
	switch c.GroupProtocol {
	case GroupProtocolClassic:
	case GroupProtocolConsumer:
		if c.Assignment != AssignmentGroup {
			errs = append(errs, fmt.Errorf("field %s: only used with %s: %s", fieldGroupProtocol, fieldAssignment, AssignmentGroup))
		}
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want %s or %s)", fieldGroupProtocol, c.GroupProtocol, GroupProtocolClassic, GroupProtocolConsumer))
	}
	switch c.PartitionMetrics {
	case PartitionMetricsPartition, PartitionMetricsTopic:
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want %s or %s)", fieldPartitionMetrics, c.PartitionMetrics, PartitionMetricsPartition, PartitionMetricsTopic))
	}
	errs = append(errs, c.validateFetch()...)
	if c.DiscoveryInterval < 0 {
		errs = append(errs, fmt.Errorf("field %s: must not be negative (0 turns discovery off), got %v", fieldDiscoveryInterval, c.DiscoveryInterval))
	}
	table := ""
	if c.Table != nil {
		table = c.Table.Table().Name
	}
	errs = append(errs, groupProblems(c.ConsumerGroup, c.StartFrom, c.Assignment, c.ResetOffsets, table)...)
	switch c.StartFrom {
	case StartEarliest, StartLatest, StartCommitted, StartTimestamp, StartOffsets:
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want one of %s, %s, %s, %s, %s)",
			fieldStartFrom, c.StartFrom, StartEarliest, StartLatest, StartCommitted, StartTimestamp, StartOffsets))
	}
	switch c.StopAt {
	case StopNone, StopLatest, StopTimestamp, StopOffsets, StopCommitted:
	default:
		errs = append(errs, fmt.Errorf("field %s: unknown value %q (want one of %s, %s, %s, %s, %s)",
			fieldStopAt, c.StopAt, StopNone, StopLatest, StopTimestamp, StopOffsets, StopCommitted))
	}
	errs = append(errs, c.validateBounds()...)
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
	if c.FetchMaxWait < minFetchMaxWait {
		// franz-go refuses less when the client is built, which a run
		// would retry for ever: lint refuses it.
		errs = append(errs, fmt.Errorf("field %s: must be at least %v (the Kafka client's minimum), got %v", fieldFetchMaxWait, minFetchMaxWait, c.FetchMaxWait))
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
	if c.MaxUnackedBytes < minUnackedBytes {
		errs = append(errs, fmt.Errorf("field %s: must be at least %d (4 MiB: four fetches of one partition, max.partition.fetch.bytes), got %d",
			fieldMaxUnackedBytes, minUnackedBytes, c.MaxUnackedBytes))
	}
	if c.Readers < 1 || c.Readers > maxReaders {
		errs = append(errs, fmt.Errorf("field %s: must be between 1 and %d, got %d", fieldReaders, maxReaders, c.Readers))
	}
	if c.Shard.Count < 1 {
		errs = append(errs, fmt.Errorf("field %s.%s: must be at least 1, got %d", fieldShard, fieldShardCount, c.Shard.Count))
	} else if c.Shard.Index < 0 || c.Shard.Index >= c.Shard.Count {
		errs = append(errs, fmt.Errorf("field %s.%s: must be in [0, %s.%s) = [0, %d), got %d",
			fieldShard, fieldShardIndex, fieldShard, fieldShardCount, c.Shard.Count, c.Shard.Index))
	}
	return errors.Join(errs...)
}

// validateFetch collects the problems of the fetch sizes and of the group
// member settings.
func (c Config) validateFetch() []error {
	var errs []error
	for _, f := range []struct {
		field string
		v     int
	}{{fieldFetchMinBytes, c.FetchMinBytes}, {fieldFetchMaxBytes, c.FetchMaxBytes}, {fieldFetchMaxPartitionBytes, c.FetchMaxPartitionBytes}} {
		if f.v < 1 || f.v > math.MaxInt32 {
			errs = append(errs, fmt.Errorf("field %s: must be between 1 and %d bytes, got %d", f.field, math.MaxInt32, f.v))
		}
	}
	if c.HeartbeatInterval < 0 || (c.HeartbeatInterval > 0 && c.HeartbeatInterval >= c.SessionTimeout) {
		errs = append(errs, fmt.Errorf("field %s: must be positive and below %s (%v), got %v",
			fieldHeartbeatInterval, fieldSessionTimeout, c.SessionTimeout, c.HeartbeatInterval))
	}
	if c.Assignment != AssignmentGroup {
		if c.HeartbeatInterval != 0 {
			errs = append(errs, fmt.Errorf("field %s: only used with %s: %s", fieldHeartbeatInterval, fieldAssignment, AssignmentGroup))
		}
		if c.GroupInstanceID != "" {
			errs = append(errs, fmt.Errorf("field %s: only used with %s: %s (the enumerator joins no group)", fieldGroupInstanceID, fieldAssignment, AssignmentGroup))
		}
	}
	return errs
}

// heartbeatInterval is the group member's heartbeat interval: the one set,
// else three heartbeats per session timeout, at most 3s, as the Java client.
func (c Config) heartbeatInterval() time.Duration {
	if c.HeartbeatInterval > 0 {
		return c.HeartbeatInterval
	}
	return min(3*time.Second, c.SessionTimeout/3)
}

// groupProblems returns the problems of the settings that depend on the
// consumer group: those that need one when group is "" (start_from:
// committed, assignment: group, reset_offsets), a blank group, and the
// combinations reset_offsets does not take. table is the name of the
// config's table ("" if none), whose options can set the group and the
// start mode. Used by validate and by the lint rule.
func groupProblems(group string, start StartFrom, assignment Assignment, reset bool, table string) []error {
	var errs []error
	if reset && assignment == AssignmentGroup {
		errs = append(errs, fmt.Errorf("field %s: not used with %s: %s (members start at the group's committed offsets; "+
			"reset those with kafka-consumer-groups.sh --reset-offsets while no member runs)", fieldResetOffsets, fieldAssignment, AssignmentGroup))
	}
	if reset && start == StartCommitted {
		errs = append(errs, fmt.Errorf("field %s: set %s to where the offsets are reset to (%s, %s, %s or %s); with %s there is nothing to reset to",
			fieldResetOffsets, fieldStartFrom, StartEarliest, StartLatest, StartTimestamp, StartOffsets, StartCommitted))
	}
	if group != "" {
		if strings.TrimSpace(group) == "" {
			errs = append(errs, fmt.Errorf("field %s: %q is blank; give a group id, or leave the field out to read without a group", fieldConsumerGroup, group))
		}
		return errs
	}
	set := "set " + fieldConsumerGroup
	modes := fmt.Sprintf("set %s to %s, %s, %s or %s", fieldStartFrom, StartEarliest, StartLatest, StartTimestamp, StartOffsets)
	if table != "" {
		set = fmt.Sprintf("set option '%s' of table %s (or %s)", schema.OptGroupID, table, fieldConsumerGroup)
		modes = fmt.Sprintf("set option '%s' of table %s to earliest-offset, latest-offset, timestamp or specific-offsets", schema.OptStartupMode, table)
	}
	if start == StartCommitted {
		errs = append(errs, fmt.Errorf("field %s: required with %s: %s (the default), which starts at the group's committed offsets: "+
			"%s, or %s to read without a group (nothing is committed; every start begins at %s)",
			fieldConsumerGroup, fieldStartFrom, StartCommitted, set, modes, fieldStartFrom))
	}
	if assignment == AssignmentGroup {
		errs = append(errs, fmt.Errorf("field %s: required with %s: %s (the readers join the group): %s",
			fieldConsumerGroup, fieldAssignment, AssignmentGroup, set))
	}
	if reset {
		errs = append(errs, fmt.Errorf("field %s: needs %s: without a group there are no committed offsets to reset", fieldResetOffsets, fieldConsumerGroup))
	}
	return errs
}

// clientOpts returns the consumer options of this config, to be added to the
// connection options.
func (c Config) clientOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ConsumeResetOffset(c.resetOffset()),
		kgo.FetchMaxWait(c.FetchMaxWait),
		kgo.FetchMinBytes(int32(c.FetchMinBytes)),
		// At most a quarter of max_unacknowledged_bytes: what lands
		// after the budget paused fetching stays a fraction of it
		// (budget.go).
		kgo.FetchMaxBytes(c.fetchMaxBytes()),
		kgo.FetchMaxPartitionBytes(int32(c.FetchMaxPartitionBytes)),
		// Control records (transaction markers) come to the reader, which
		// drops them but moves the partition's position past them, so that
		// the commit position and stop_at see the end of a transaction.
		kgo.KeepControlRecords(),
	}
	if c.Assignment == AssignmentGroup && c.DiscoveryInterval > 0 {
		// Group members see new partitions and topics when their
		// metadata is refreshed; the coordinator then rebalances.
		opts = append(opts, kgo.MetadataMaxAge(c.DiscoveryInterval),
			kgo.MetadataMinAge(max(10*time.Millisecond, min(5*time.Second, c.DiscoveryInterval/2))))
	}
	if c.discovers() {
		// The client caches metadata for its min age (default 5s); a
		// shorter discovery interval must see fresher metadata.
		age := min(5*time.Second, c.DiscoveryInterval/2)
		if c.Conn.MetadataMaxAge > 0 {
			age = min(age, c.Conn.MetadataMaxAge)
		}
		opts = append(opts, kgo.MetadataMinAge(max(10*time.Millisecond, age)))
	}
	if c.RackID != "" {
		opts = append(opts, kgo.Rack(c.RackID))
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

// validateGroup checks the settings that group mode does not take: the
// coordinator decides which partitions a process reads, and they start at
// the group's committed offsets.
func (c Config) validateGroup() []error {
	var errs []error
	if c.Shard.Count > 1 {
		errs = append(errs, fmt.Errorf("field %s: not used with %s: %s (the group coordinator shares the partitions)", fieldShard, fieldAssignment, AssignmentGroup))
	}
	if c.StopAt != StopNone {
		errs = append(errs, fmt.Errorf("field %s: must be %s with %s: %s (a bounded read needs a fixed set of partitions)", fieldStopAt, StopNone, fieldAssignment, AssignmentGroup))
	}
	if c.StartFrom != StartCommitted {
		errs = append(errs, fmt.Errorf("field %s: must be %s with %s: %s (members start at the group's committed offsets, else %s)",
			fieldStartFrom, StartCommitted, fieldAssignment, AssignmentGroup, fieldCommittedFallback))
	}
	if c.CommittedFallback == FallbackError {
		errs = append(errs, fmt.Errorf("field %s: must be %s or %s with %s: %s", fieldCommittedFallback, FallbackEarliest, FallbackLatest, fieldAssignment, AssignmentGroup))
	}
	if c.Partitions != nil {
		errs = append(errs, fmt.Errorf("field %s: not used with %s: %s; list %s instead", fieldPartitions, fieldAssignment, AssignmentGroup, fieldTopics))
	}
	return errs
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// discovers reports whether the input scans for new partitions while
// running: not for explicit partitions, nor for bounded reads (as Flink,
// whose bounded sources do not discover).
func (c Config) discovers() bool {
	return c.DiscoveryInterval > 0 && c.Partitions == nil && c.StopAt == StopNone && c.Assignment != AssignmentGroup
}

// subscribed reports whether a topic is read, by name. Explicit partitions
// are checked by the caller.
func (c Config) subscribed(topic string) bool {
	switch {
	case c.TopicPattern != nil:
		return c.TopicPattern.MatchString(topic) && (c.TopicExclude == nil || !c.TopicExclude.MatchString(topic))
	case c.Partitions != nil:
		_, ok := c.Partitions[topic]
		return ok
	default:
		for _, t := range c.Topics {
			if t == topic {
				return true
			}
		}
		return false
	}
}
