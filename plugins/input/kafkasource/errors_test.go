package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/halt"
)

// DESIGN.md contract 9 on the source: an error that cannot clear without a
// config change ends the run (internal/halt) and the input
// (service.ErrEndOfInput) with a message naming the field and the topic or
// partition; a transient one is returned for Benthos to log and retry.

// buildSourceIn builds the input of yaml with mgr as its resources, without
// connecting it.
func buildSourceIn(t *testing.T, yaml string, mgr *service.Resources) *source {
	t.Helper()
	pc, err := testSpec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := configFromParsed(pc)
	if err != nil {
		t.Fatal(err)
	}
	s := newSource(c, mgr)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// wantRunEnded checks that err ends the input and that the run stopped on
// an error containing each of want.
func wantRunEnded(t *testing.T, err error, mgr *service.Resources, want ...string) {
	t.Helper()
	if !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("error %v: want one that ends the input (service.ErrEndOfInput)", err)
	}
	run := halt.For(mgr)
	if !run.Stopped() {
		t.Fatalf("the run did not stop on %v", err)
	}
	for _, w := range want {
		if !strings.Contains(run.Err().Error(), w) {
			t.Errorf("the run stopped on %q, which does not contain %q", run.Err(), w)
		}
	}
}

// readUntilErr reads (and acknowledges) until ReadBatch returns an error.
func readUntilErr(t *testing.T, s *source) error {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		b, err := readOne(t, s, time.Until(deadline))
		if err != nil {
			return err
		}
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TOPIC_AUTHORIZATION_FAILED on a fetch (no READ ACL on the topic) never
// clears by itself: the run stops, naming the topic, its partition and the
// field, and ReadBatch ends the input.
func TestSourceFetchAuthorizationEndsRun(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	failNextFetch(c, kerr.TopicAuthorizationFailed)
	mgr := service.MockResources()
	s := newSourceIn(t, sourceYAML(addr, "g", "start_from: earliest"), mgr, nil)
	err := readUntilErr(t, s)
	var fe *FetchError
	if !errors.As(err, &fe) || !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("error %v: want a TOPIC_AUTHORIZATION_FAILED *FetchError", err)
	}
	wantRunEnded(t, err, mgr, fmt.Sprintf(`fetching topic "t" partition %d: TOPIC_AUTHORIZATION_FAILED`, fe.Partition),
		"grant the principal READ and DESCRIBE on the topic, or change field topics")
}

// A fetch error that may clear (UNKNOWN_SERVER_ERROR: the broker failed for
// its own reasons) comes out of ReadBatch naming topic and partition, the
// run goes on, and reading resumes once the broker answers.
func TestSourceTransientFetchErrorGoesOn(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	failNextFetch(c, kerr.UnknownServerError)
	mgr := service.MockResources()
	s := newSourceIn(t, sourceYAML(addr, "g", "start_from: earliest"), mgr, nil)
	err := readUntilErr(t, s)
	var fe *FetchError
	if !errors.As(err, &fe) || !errors.Is(err, kerr.UnknownServerError) ||
		!strings.Contains(err.Error(), fmt.Sprintf(`fetching topic "t" partition %d: UNKNOWN_SERVER_ERROR`, fe.Partition)) {
		t.Fatalf("error %v: want an UNKNOWN_SERVER_ERROR fetch error naming topic t and its partition", err)
	}
	if errors.Is(err, service.ErrEndOfInput) || halt.For(mgr).Stopped() {
		t.Fatalf("a transient fetch error ended the run: %v", err)
	}
	produceN(t, addr, "t", 1, 2)
	deadline := time.Now().Add(testTimeout)
	for {
		b, err := readOne(t, s, time.Until(deadline))
		if errors.As(err, &fe) && !errors.Is(err, service.ErrEndOfInput) {
			continue // the other partitions' errors of the failed fetch
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.pos[0] != (position{tp: tpT(2), offset: 0}) {
			t.Fatalf("after the error read %v, want t/2 offset 0", b.pos)
		}
		break
	}
	if halt.For(mgr).Stopped() {
		t.Fatalf("the run stopped: %v", halt.For(mgr).Err())
	}
}

// refuseCommits makes the cluster answer every OffsetCommit with code for
// every partition in it.
func refuseCommits(c *kfake.Cluster, code *kerr.Error) {
	c.ControlKey(int16(kmsg.OffsetCommit), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.OffsetCommitRequest)
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = code.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// GROUP_AUTHORIZATION_FAILED on an offset commit (no READ ACL on the group)
// never clears: the run stops naming the group and field consumer_group,
// and ReadBatch ends the input. Nothing was committed.
func TestSourceCommitAuthorizationEndsRun(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	produceN(t, addr, "t", 2, 0)
	mgr := service.MockResources()
	s := newSourceIn(t, sourceYAML(addr, "g", "start_from: earliest", "commit_period: 20ms"), mgr, nil)
	refuseCommits(c, kerr.GroupAuthorizationFailed)
	err := readUntilErr(t, s)
	if !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("error %v: want GROUP_AUTHORIZATION_FAILED", err)
	}
	wantRunEnded(t, err, mgr, `of topic "t" partition`, `to consumer group "g": GROUP_AUTHORIZATION_FAILED`,
		`grant the principal READ on consumer group "g", or change field consumer_group`)
	// Later calls end the input too.
	if _, err := readOne(t, s, time.Second); !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("ReadBatch after the end: %v, want service.ErrEndOfInput", err)
	}
	if got := committedOffsets(t, addr, "g"); len(got) != 0 {
		t.Fatalf("committed %v, want nothing", got)
	}
}

// In assignment: group, a member that may not join its group
// (GROUP_AUTHORIZATION_FAILED on JoinGroup) ends the run naming the group
// and field consumer_group.
func TestSourceGroupJoinAuthorizationEndsRun(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	c.ControlKey(int16(kmsg.JoinGroup), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil, true
	})
	mgr := service.MockResources()
	s := newSourceIn(t, sourceYAML(addr, "g", "assignment: group"), mgr, nil)
	err := readUntilErr(t, s)
	if !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("error %v: want GROUP_AUTHORIZATION_FAILED", err)
	}
	wantRunEnded(t, err, mgr, "kafka_source: consuming: unable to join group session: GROUP_AUTHORIZATION_FAILED",
		`grant the principal READ on consumer group "g", or change field consumer_group`)
}

// A commit refused for a reason that clears (the coordinator is loading)
// is logged and tried again: the run goes on.
func TestSourceTransientCommitErrorGoesOn(t *testing.T) {
	t.Parallel()
	c, addr := newFakeCluster(t)
	produceN(t, addr, "t", 2, 0)
	mgr := service.MockResources()
	s := newSourceIn(t, sourceYAML(addr, "g", "start_from: earliest", "commit_period: 20ms"), mgr, nil)
	var refused int // the control function runs on the cluster's goroutine
	c.ControlKey(int16(kmsg.OffsetCommit), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if refused++; refused > 3 {
			return nil, nil, false // the cluster commits
		}
		req := kreq.(*kmsg.OffsetCommitRequest)
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.UnknownServerError.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	for _, b := range readRecords(t, s, 2) {
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	waitCommitted(t, addr, "g", map[topicPartition]int64{tpT(0): 2, tpT(1): 0, tpT(2): 0})
	if halt.For(mgr).Stopped() {
		t.Fatalf("a transient commit error stopped the run: %v", halt.For(mgr).Err())
	}
}

// A topic of `topics` that does not exist ends the run, naming the topic
// and the field, once a second listing at least missingConfirmWait later
// still misses it; the first asks Benthos for that back-off. A topic created
// in between is found, and the input starts.
func TestSourceMissingTopicEndsRun(t *testing.T) {
	t.Parallel()
	for _, created := range []bool{false, true} {
		t.Run(fmt.Sprintf("created=%v", created), func(t *testing.T) {
			t.Parallel()
			addr := newCluster(t)
			mgr := service.MockResources()
			s := buildSourceIn(t, fmt.Sprintf("seed_brokers: [ %q ]\ntopics: [ t, nope ]\nconsumer_group: g\n", addr), mgr)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			err := s.Connect(ctx)
			var bo *service.ErrBackOff
			if !errors.As(err, &bo) || bo.Wait <= 0 || bo.Wait > missingConfirmWait {
				t.Fatalf("first connect: %v, want a back-off of at most %v", err, missingConfirmWait)
			}
			if !strings.Contains(err.Error(), `topic "nope" does not exist (field topics)`) || halt.For(mgr).Stopped() {
				t.Fatalf("first connect: %v (run stopped: %v), want a retry naming topic nope and field topics", err, halt.For(mgr).Stopped())
			}
			if created {
				if _, err := kadm.NewClient(newClient(t, addr)).CreateTopic(ctx, 1, 1, nil, "nope"); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(bo.Wait) // the back-off Benthos waits before it connects again
			err = s.Connect(ctx)
			if created {
				if err != nil || halt.For(mgr).Stopped() {
					t.Fatalf("connect after the topic was created: %v", err)
				}
				return
			}
			wantRunEnded(t, err, mgr, `topic "nope" does not exist (field topics)`)
		})
	}
}

// A partition of `partitions` that its topic does not have ends the run
// the same way, naming field partitions.
func TestSourceMissingPartitionEndsRun(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	mgr := service.MockResources()
	s := buildSourceIn(t, fmt.Sprintf("seed_brokers: [ %q ]\npartitions: { t: [ 0, 7 ] }\nconsumer_group: g\n", addr), mgr)
	s.missingSince = time.Now().Add(-missingConfirmWait) // missed once already
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	wantRunEnded(t, s.Connect(ctx), mgr, `field partitions: topic "t" has no partition 7`)
}

// committed_fallback: error refuses to start a partition without a usable
// committed offset; no retry commits one, so the run ends naming the group,
// the partition and the field.
func TestSourceCommittedFallbackErrorEndsRun(t *testing.T) {
	t.Parallel()
	addr := newCluster(t)
	mgr := service.MockResources()
	s := buildSourceIn(t, sourceYAML(addr, "g", "start_from: committed", "committed_fallback: error"), mgr)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	err := s.Connect(ctx)
	var se *StartOffsetError
	if !errors.As(err, &se) || !errors.Is(err, ErrNoCommittedOffset) {
		t.Fatalf("error %v is not a *StartOffsetError wrapping ErrNoCommittedOffset", err)
	}
	wantRunEnded(t, err, mgr, `consumer group "g" has no committed offset for topic "t" partition`, "committed_fallback is error",
		"commit an offset for it, or set committed_fallback to earliest or latest")
}
