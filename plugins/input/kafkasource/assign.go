package kafkasource

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// assignment is how a session gets its splits, and what that means for
// committing their offsets: franz-go's directConsumer and groupConsumer, or
// Flink's split enumerator and, for elastic scale-out, Kafka's group
// coordinator. The owner calls the methods that take it on its goroutine.
type assignment interface {
	// clientOpts are the options of reader i's client beyond the config's.
	clientOpts(i int) []kgo.Opt
	// splits returns the splits read from the start of the session: resume
	// are the previous session's positions and stops its stop offsets
	// (nil at the first connect). A group has none: its coordinator
	// assigns them once the readers joined.
	splits(ctx context.Context, adm *kadm.Client, resume, stops map[topicPartition]int64) ([]split, error)
	// discoveryInterval is how often discover runs, 0 for never.
	discoveryInterval() time.Duration
	// discover starts a round of partition discovery.
	discover(o *owner)
	// commitCall returns the network call that commits pos, run off the
	// owner's loop; what it needs of the owner's state it takes now.
	commitCall(o *owner, pos map[topicPartition]int64) func(context.Context) (kadm.OffsetResponses, error)
	// txnCommits groups pos (and its offset-commit metadata, nil for
	// none) into the commits of an exactly-once sink's transaction.
	txnCommits(o *owner, pos map[topicPartition]int64, meta map[topicPartition]string) ([]txnoffsets.Commit, error)
	// connected is the log line of a started session.
	connected(rep startReport) string
	// closing is the log line of what closing the clients waits for, ""
	// for nothing worth saying.
	closing() string
}

// newAssignment is the assignment conf asks for.
func newAssignment(conf Config, sess *session) assignment {
	if conf.Assignment == AssignmentGroup {
		return &groupAssignment{conf: conf, sess: sess}
	}
	return &enumeratorAssignment{conf: conf, log: sess.log}
}

// listedPartitions is how many partitions a log line names one by one;
// past it, describePartitions counts them per topic instead.
const listedPartitions = 16

// describePartitions names tps (sorted) for a log line: each one while they
// are few, else their number and their topics', with the first and last,
// so that an assignment of 10,000 partitions is one short line.
func describePartitions(tps []topicPartition) string {
	if len(tps) <= listedPartitions {
		return fmt.Sprint(tps)
	}
	topics := 0
	for i, tp := range tps {
		if i == 0 || tp.topic != tps[i-1].topic {
			topics++
		}
	}
	return fmt.Sprintf("%d partitions of %d topics [%v ... %v]", len(tps), topics, tps[0], tps[len(tps)-1])
}
