package tryrun

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
)

// TestConfiguredBrokersWhenConfirmed runs against the configured (real)
// broker once the request confirms it: the records the run captures are
// the ones produced to the real broker beforehand.
func TestConfiguredBrokersWhenConfirmed(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, broker, "studio-tryrun", 2)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := kafkatest.ProduceN(t.Context(), cl, 3, func(i int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf(`{"i":%d}`, i))}
	}); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t)
	run, err := r.Start(StartRequest{
		Target: TargetConfigured, ConfirmRealBrokers: true,
		YAML: fmt.Sprintf(`input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %q ]
    start_from: earliest
    stop_at: latest
output:
  drop: {}
`, broker, topic),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Brokers) != 1 || run.Brokers[0] != broker {
		t.Fatalf("brokers %v, want %s", run.Brokers, broker)
	}
	select {
	case <-run.Done():
	case <-time.After(90 * time.Second):
		t.Fatalf("the bounded run did not end: %+v", run.Snapshot())
	}
	s := run.Snapshot()
	if s.Exit.Code != 0 || len(s.Messages) != 3 {
		t.Fatalf("exit %+v, messages %+v, logs %+v", s.Exit, s.Messages, s.Logs)
	}
	for _, m := range s.Messages {
		if m.Metadata["kafka_topic"] != topic {
			t.Fatalf("message %+v: want one read from %s on the real broker", m, topic)
		}
	}
}
