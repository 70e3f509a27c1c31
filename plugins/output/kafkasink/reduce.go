package kafkasink

import "github.com/twmb/franz-go/pkg/kgo"

// reduceToLastPerKey is upsert-kafka's buffer flush reduction (Flink's
// ReducingUpsertWriter): of the records of one batch (one flush of
// sink.buffer-flush.*) that share a topic and key, only the last is
// written. The others are left out: recs[i] becomes nil with errs[i] nil,
// and their messages are acknowledged with the batch, since the record
// that supersedes them carries the key's latest row (an update, or a
// tombstone for a delete). A record superseded only by one that failed to
// build stays: the key's latest valid row must not be lost. It returns how
// many records it left out.
func reduceToLastPerKey(recs []*kgo.Record, errs []error) int {
	type topicKey struct{ topic, key string }
	seen := make(map[topicKey]struct{}, len(recs))
	dropped := 0
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r == nil || errs[i] != nil {
			continue
		}
		k := topicKey{r.Topic, string(r.Key)}
		if _, later := seen[k]; later {
			recs[i] = nil
			dropped++
			continue
		}
		seen[k] = struct{}{}
	}
	return dropped
}
