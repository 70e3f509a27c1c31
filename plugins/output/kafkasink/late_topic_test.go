package kafkasink

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A topic created a few seconds after the sink first wrote to it (as a
// KRaft broker can lag behind a topic created just before the run) is
// written to, at the client's default metadata timing: franz-go's own
// default gives a missing topic about 1 s before the record fails and the
// run ends.
func TestTopicCreatedLateIsWritten(t *testing.T) {
	t.Parallel()
	c, addr := newCluster(t)
	misses := make(chan struct{}, 64)
	c.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range req.(*kmsg.MetadataRequest).Topics {
			if rt.Topic != nil && *rt.Topic == "late" {
				select {
				case misses <- struct{}{}:
				default:
				}
			}
		}
		return nil, nil, false
	})
	s, run, logs := newHaltableSink(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopic: late\nallow_auto_topic_creation: false\n", addr))
	connect(t, s)

	created := make(chan error, 1)
	go func() {
		<-misses // the sink asked for the topic and did not find it
		time.Sleep(3 * time.Second)
		adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			created <- err
			return
		}
		defer adm.Close()
		_, err = kadm.NewClient(adm).CreateTopic(context.Background(), 1, 1, nil, "late")
		created <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.WriteBatch(ctx, values("", "v")); err != nil {
		t.Fatalf("writing to a topic created 3 s late: %v\n%s", err, logs.String())
	}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if run.Stopped() {
		t.Fatalf("the run stopped: %v", run.Err())
	}
	if got := readAll(t, addr, "late", 1, false); string(got[0].Value) != "v" {
		t.Fatalf("topic late holds %q, want v", got[0].Value)
	}
}
