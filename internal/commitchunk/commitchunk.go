// Package commitchunk splits an offset commit of many partitions into
// requests that the group coordinator accepts.
//
// The coordinator writes a request's offsets to __consumer_offsets as one
// record batch, which the broker refuses past its message.max.bytes
// (default 1 MiB) with UNKNOWN_SERVER_ERROR ("The request included a
// message larger than the max message size the server will accept"). With
// 10,000 partitions one OffsetCommit, or one TxnOffsetCommit, is over it.
// kafka_source's commits and an exactly-once kafka_sink's transactional
// offset commits therefore go in several requests, each within Bytes.
package commitchunk

// Bytes bounds the estimated size of the records of one commit request:
// half the broker's default message.max.bytes, leaving room for the batch
// framing and for a broker whose records are larger than the estimate.
const Bytes = 512 << 10

// RecordBytes estimates the size of the record the coordinator writes for
// one partition's offset: its key (group, topic, partition), its value
// (offset, leader epoch, metadata, commit time) and the record's framing.
func RecordBytes(group, topic string, metadata int) int {
	return 64 + len(group) + len(topic) + metadata
}

// Split cuts keys, in their order, into runs whose sizes add up to at most
// budget; a key over the budget on its own is a run of its own. It returns
// nil for no keys.
func Split[K any](keys []K, size func(K) int, budget int) [][]K {
	var (
		out   [][]K
		start int
		sum   int
	)
	for i, k := range keys {
		n := size(k)
		if i > start && sum+n > budget {
			out = append(out, keys[start:i:i])
			start, sum = i, 0
		}
		sum += n
	}
	if start < len(keys) {
		out = append(out, keys[start:len(keys):len(keys)])
	}
	return out
}
