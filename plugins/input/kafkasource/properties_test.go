package kafkasource

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/schema"
)

// propsDDL is a kafka table with extra WITH options.
func propsDDL(extra ...string) string {
	return yamlDDL(fmt.Sprintf(`CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'raw',
  'properties.bootstrap.servers' = 'h:1', 'properties.group.id' = 'g'%s)`, strings.Join(append([]string{""}, extra...), ",\n  ")))
}

// The consumer's Kafka client properties of a table set the kafka_source
// fields with the same meaning, and reach the franz-go client.
func TestTableConsumerProperties(t *testing.T) {
	t.Parallel()
	c, err := parseConfig(t, propsDDL(
		"'properties.isolation.level' = 'read_uncommitted'",
		"'properties.auto.offset.reset' = 'none'",
		"'properties.client.rack' = 'eu-1a'",
		"'properties.fetch.min.bytes' = '65536'",
		"'properties.fetch.max.wait.ms' = '250'",
		"'properties.max.partition.fetch.bytes' = '2097152'",
		"'properties.fetch.max.bytes' = '10485760'",
		"'properties.max.poll.records' = '200'",
		"'properties.client.id' = 'job-7'",
	))
	if err != nil {
		t.Fatal(err)
	}
	if c.IsolationLevel != ReadUncommitted || c.CommittedFallback != FallbackError || c.RackID != "eu-1a" || c.BatchSize != 200 ||
		c.FetchMinBytes != 65536 || c.FetchMaxWait != 250*time.Millisecond || c.FetchMaxPartitionBytes != 2<<20 || c.FetchMaxBytes != 10<<20 ||
		c.Conn.ClientID != "job-7" {
		t.Fatalf("derived config: %+v", c)
	}
	cl, err := kgo.NewClient(append(c.Conn.Opts(), c.clientOpts()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, o := range []struct {
		opt  any
		want any
	}{
		{kgo.FetchMinBytes, int32(65536)}, {kgo.FetchMaxWait, 250 * time.Millisecond}, {kgo.FetchMaxPartitionBytes, int32(2 << 20)},
		{kgo.FetchMaxBytes, int32(10 << 20)}, {kgo.Rack, "eu-1a"}, {kgo.ClientID, "job-7"},
	} {
		if got := cl.OptValue(o.opt); got != o.want {
			t.Errorf("client option %T: %v, want %v", o.opt, got, o.want)
		}
	}

	// Group mode: the member settings.
	c, err = parseConfig(t, propsDDL(
		"'properties.session.timeout.ms' = '30000'",
		"'properties.heartbeat.interval.ms' = '2000'",
		"'properties.group.instance.id' = 'worker-1'",
		"'properties.group.protocol' = 'CLASSIC'",
	)+"assignment: group\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.SessionTimeout != 30*time.Second || c.heartbeatInterval() != 2*time.Second || c.GroupInstanceID != "worker-1" || c.GroupProtocol != GroupProtocolClassic {
		t.Fatalf("group settings: session %v heartbeat %v instance %q protocol %q", c.SessionTimeout, c.heartbeatInterval(), c.GroupInstanceID, c.GroupProtocol)
	}
	a := &groupAssignment{conf: c}
	for i, want := range []string{"worker-1", "worker-1-1"} {
		cl, err := kgo.NewClient(append(c.Conn.Opts(), a.clientOpts(i)...)...)
		if err != nil {
			t.Fatal(err)
		}
		got := cl.OptValue(kgo.InstanceID)
		hb := cl.OptValue(kgo.HeartbeatInterval)
		cl.Close()
		if got != want || hb != 2*time.Second {
			t.Errorf("reader %d: instance id %v, heartbeat %v; want %q, 2s", i, got, hb, want)
		}
	}
}

// A property that contradicts a written field, or that the component's
// settings leave unused, is an error naming both, at parse and lint time.
func TestTableConsumerPropertyErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"isolation level contradicts", propsDDL("'properties.isolation.level' = 'read_committed'") + "isolation_level: read_uncommitted\n",
			[]string{`field isolation_level: "read_uncommitted" contradicts option 'properties.isolation.level' = 'read_committed' of table t`}},
		{"fetch min bytes contradicts", propsDDL("'properties.fetch.min.bytes' = '1024'") + "fetch_min_bytes: 2048\n",
			[]string{`field fetch_min_bytes: 2048 contradicts option 'properties.fetch.min.bytes' = '1024' of table t`}},
		{"fetch wait contradicts", propsDDL("'properties.fetch.max.wait.ms' = '100'") + "fetch_max_wait: 1s\n",
			[]string{`field fetch_max_wait: "1s" contradicts option 'properties.fetch.max.wait.ms' = '100' of table t`}},
		{"group instance id without group mode", propsDDL("'properties.group.instance.id' = 'w1'"),
			[]string{"field group_instance_id: only used with assignment: group"}},
		{"heartbeat not below the session timeout", propsDDL("'properties.session.timeout.ms' = '6000'", "'properties.heartbeat.interval.ms' = '6000'") + "assignment: group\n",
			[]string{"field group_heartbeat_interval: must be positive and below group_session_timeout (6s), got 6s"}},
		{"unknown reset", propsDDL("'properties.auto.offset.reset' = 'smallest'"),
			[]string{"option 'properties.auto.offset.reset' = 'smallest': want one of 'earliest', 'latest', 'none'"}},
		{"Java class", propsDDL("'properties.key.deserializer' = 'org.apache.kafka.common.serialization.StringDeserializer'"),
			[]string{"option 'properties.key.deserializer' is not supported by connectd: a Java class; connectd decodes keys with 'key.format'"}},
		{"interceptors", propsDDL("'properties.interceptor.classes' = 'com.example.I'"),
			[]string{"option 'properties.interceptor.classes' is not supported by connectd: Java classes"}},
		{"auto commit", propsDDL("'properties.enable.auto.commit' = 'true'"),
			[]string{"option 'properties.enable.auto.commit' is not supported by connectd: connectd commits offsets itself"}},
		{"unknown property", propsDDL("'properties.fetch.min.byte' = '1'"),
			[]string{"option 'properties.fetch.min.byte' is not a Kafka client property connectd knows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig(t, tc.yaml)
			lintErr := service.NewStreamBuilder().SetYAML("input:\n  kafka_source:\n    " +
				strings.ReplaceAll(strings.TrimSpace(tc.yaml), "\n", "\n    ") + "\noutput:\n  drop: {}\n")
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("config: want %q, got %v", w, err)
				}
				if lintErr == nil || !strings.Contains(lintErr.Error(), w) {
					t.Errorf("lint: want %q, got %v", w, lintErr)
				}
			}
		})
	}
}

// Every consumer property schema accepts is applied by the source: none is
// accepted and ignored.
func TestEveryConsumerPropertyApplied(t *testing.T) {
	t.Parallel()
	for _, name := range schema.ClientPropertyNames(schema.SideSource) {
		if _, ok := tableProperties[name]; !ok {
			t.Errorf("consumer property %s is accepted by schema but not applied by kafka_source", name)
		}
	}
}
