package kafkasource

import (
	"context"
	"fmt"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/txnoffsets"
)

// enumeratorAssignment is assignment: enumerator (as Flink's KafkaSource):
// the process lists the partitions itself (enumerate, enumerator.go) and
// reads all of them or its shard, each on the reader Flink's owner function
// names; partition discovery adds and releases partitions while it runs.
// Its clients are not group members: offsets are committed to the consumer
// group with the admin client, and a transaction commits them as no member.
type enumeratorAssignment struct {
	conf Config
	log  *service.Logger
}

func (a *enumeratorAssignment) clientOpts(int) []kgo.Opt { return nil }

func (a *enumeratorAssignment) splits(ctx context.Context, adm *kadm.Client, resume, stops map[topicPartition]int64) ([]split, error) {
	return enumerate(ctx, adm, a.conf, resume, stops, a.log)
}

func (a *enumeratorAssignment) discoveryInterval() time.Duration {
	if a.conf.discovers() {
		return a.conf.DiscoveryInterval
	}
	return 0
}

func (a *enumeratorAssignment) commitCall(o *owner, pos map[topicPartition]int64) func(context.Context) (kadm.OffsetResponses, error) {
	adm, group := o.adm, o.conf.ConsumerGroup
	return func(ctx context.Context) (kadm.OffsetResponses, error) {
		return commitChunked(ctx, group, pos, func(ctx context.Context, pos map[topicPartition]int64) (kadm.OffsetResponses, error) {
			return adm.CommitOffsets(ctx, group, positionOffsets(pos))
		})
	}
}

func (a *enumeratorAssignment) txnCommits(_ *owner, pos map[topicPartition]int64, meta map[topicPartition]string) ([]txnoffsets.Commit, error) {
	c := newTxnCommit(txnoffsets.NoMember, meta != nil)
	for tp, off := range pos {
		addToTxnCommit(c, tp, off, meta)
	}
	return []txnoffsets.Commit{*c}, nil
}

func (a *enumeratorAssignment) connected(rep startReport) string {
	group := "without a consumer group"
	if a.conf.ConsumerGroup != "" {
		group = fmt.Sprintf("for consumer group %q", a.conf.ConsumerGroup)
	}
	return fmt.Sprintf("reading %d partitions (%d finished already) %s, per reader %v", rep.splits, rep.finished, group, rep.perReader)
}

func (a *enumeratorAssignment) closing() string { return "" }
