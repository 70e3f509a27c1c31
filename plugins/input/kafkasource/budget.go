package kafkasource

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
)

// This file is a session's byte budget (max_unacknowledged_bytes): what the
// records fetched and not yet acknowledged weigh, over all of the session's
// partitions. Each record counts its key, value and headers plus
// recordOverhead, what its in-memory form costs besides (the fetched record
// and its message with the default metadata), so that the budget bounds the
// heap the records hold, not only their payload. Once the budget is used up,
// every reader stops fetching (its topics are paused, which is independent
// of the per-partition pauses of checkpoint_limit and alignment), until
// acknowledgements bring the weight below the budget again. The owner keeps
// the budget, as all of the session's state.
//
// A fetch already on its way still lands, so the weight can pass the budget
// by what one poll returns: at most the fetch size (fetchBytes) per broker
// and reader. A reader takes all its client has buffered at each poll (so
// that the next fetch overlaps with building this one's messages), so the
// fetch size is kept, by fetchSizer, at what weighs a quarter of the budget
// rather than a quarter in payload: fetches of small records whose weight
// filled the budget paused fetching after every other poll.

// recordOverhead is what a record the source keeps costs in memory besides
// its key, value and headers: the kgo.Record, its Benthos message with the
// default metadata_keys (eight values), its origin and the batch's
// bookkeeping; 777 bytes measured by TestRecordOverhead (which fails when
// the measurement moves away from it).
const recordOverhead = 768

// Fetch sizes the clients ask for (fetchBytes).
const (
	// maxFetchBytes is Kafka's fetch.max.bytes default, the largest fetch
	// the source asks for.
	maxFetchBytes = 50 << 20
	// fetchPartitionBytes is Kafka's max.partition.fetch.bytes default, and
	// the smallest fetch: one partition's.
	fetchPartitionBytes = 1 << 20
	// minUnackedBytes is the smallest max_unacknowledged_bytes: a budget
	// below a few fetches of one partition would pause after every poll.
	minUnackedBytes = 4 * fetchPartitionBytes
)

// fetchBytes is the largest fetch.max.bytes of a budget: a quarter of it,
// between one partition's fetch and Kafka's default of 50 MiB, so that what
// a poll returns past the budget stays a fraction of it.
func fetchBytes(budget int64) int32 {
	return int32(min(maxFetchBytes, max(fetchPartitionBytes, budget/4)))
}

// fetchMaxBytes is the fetch.max.bytes the clients ask for: fetch_max_bytes
// when it is set to other than its default (the user chose it, or a table's
// `properties.fetch.max.bytes`), else fetchBytes of max_unacknowledged_bytes.
func (c Config) fetchMaxBytes() int32 {
	if c.FetchMaxBytes != defaultFetchMaxBytes {
		return int32(c.FetchMaxBytes)
	}
	return fetchBytes(c.MaxUnackedBytes)
}

// fetchSizer keeps the clients' fetch.max.bytes at what weighs about a
// quarter of the budget, from the payload bytes per record seen so far,
// when fetch_max_bytes is left at its default. 200-byte records weigh
// 968 bytes each: a fetch of a quarter of the 16 MiB budget in payload
// (4 MiB, about 17,000 records) weighed the whole budget.
type fetchSizer struct {
	// auto is false when fetch_max_bytes was set: it is kept.
	auto bool
	// budget is max_unacknowledged_bytes, partBytes
	// fetch_max_partition_bytes.
	budget    int64
	partBytes int32
	// current is the fetch.max.bytes the clients ask for.
	current int32
	// perRecord is a moving average of the payload bytes per record.
	perRecord float64
}

// minAutoFetchBytes is the smallest fetch fetchSizer asks for.
const minAutoFetchBytes = 256 << 10

func newFetchSizer(c Config) fetchSizer {
	return fetchSizer{
		auto:      c.FetchMaxBytes == defaultFetchMaxBytes,
		budget:    c.MaxUnackedBytes,
		partBytes: int32(c.FetchMaxPartitionBytes),
		current:   c.fetchMaxBytes(),
	}
}

// observe takes a poll's records and payload bytes and returns the fetch
// size to ask for from now on, and whether it changed (by more than a
// quarter, so that the clients are not updated after every poll).
func (f *fetchSizer) observe(records, bytes int64) (int32, bool) {
	if !f.auto || records == 0 {
		return f.current, false
	}
	per := float64(bytes) / float64(records)
	if f.perRecord == 0 {
		f.perRecord = per
	} else {
		f.perRecord = 0.8*f.perRecord + 0.2*per
	}
	want := int32(float64(f.budget/4) * f.perRecord / (f.perRecord + recordOverhead))
	want = min(fetchBytes(f.budget), max(minAutoFetchBytes, want))
	if d := want - f.current; d > f.current/4 || -d > f.current/4 {
		f.current = want
		return want, true
	}
	return f.current, false
}

// sizeFetches adjusts the clients' fetch size to a poll of records records
// and bytes payload bytes (fetchSizer).
func (o *owner) sizeFetches(records, bytes int64) {
	if n, changed := o.fetchSize.observe(records, bytes); changed {
		for _, cl := range o.clients {
			cl.UpdateFetchMaxBytes(n, min(n, o.fetchSize.partBytes))
		}
	}
}

// weight is what a record counts against the budget.
func weight(r *kgo.Record) int64 { return recordBytes(r) + recordOverhead }

// byteBudget is the owner's account of the budget.
type byteBudget struct {
	// limit is max_unacknowledged_bytes; used is the weight of the
	// records in batches (from their fetch until they are acknowledged).
	limit, used int64
	// paused are the topics paused for the budget, on every client.
	paused []string
}

// charge adds a fetched batch's weight, and pauses fetching once the budget
// is used up.
func (o *owner) charge(n int64) {
	o.budget.used += n
	o.metrics.unackedBytes.Set(o.budget.used)
	if o.budget.used >= o.budget.limit {
		o.pauseForBudget()
	}
}

// refund takes an acknowledged (or dropped) batch's weight off, and resumes
// fetching once it is below the budget.
func (o *owner) refund(n int64) {
	if n == 0 {
		return
	}
	o.budget.used -= n
	o.metrics.unackedBytes.Set(o.budget.used)
	if len(o.budget.paused) > 0 && o.budget.used < o.budget.limit && !o.stopped {
		for _, cl := range o.clients {
			cl.ResumeFetchTopics(o.budget.paused...)
		}
		o.budget.paused = nil
	}
}

// pauseForBudget pauses, on every client, the topics of the tracked
// partitions not paused for the budget already (a topic discovered during a
// pause is paused at its first fetch).
func (o *owner) pauseForBudget() {
	if o.stopped {
		return
	}
	var topics []string
	for tp := range o.tracker.parts {
		if !slices.Contains(o.budget.paused, tp.topic) && !slices.Contains(topics, tp.topic) {
			topics = append(topics, tp.topic)
		}
	}
	if len(topics) == 0 {
		return
	}
	for _, cl := range o.clients {
		cl.PauseFetchTopics(topics...)
	}
	o.budget.paused = append(o.budget.paused, topics...)
}

// dropBatch forgets b, which was acknowledged or will not be handed out
// again, and refunds its weight.
func (o *owner) dropBatch(b *fetchedBatch) {
	st := o.batches[b]
	delete(o.batches, b)
	if st != nil {
		o.refund(st.weight)
	}
}
