package schema

// refusedOptions are options of Flink's Kafka connectors that connectd
// knows and refuses, with the reason and what to do instead.
var refusedOptions = map[string]string{
	"sink.parallelism": "connectd has no operator parallelism: a kafka_sink keeps up to max_in_flight batches in flight " +
		"(each partition's records in order); run more processes to scale out",
	"scan.parallelism": "connectd has no operator parallelism: kafka_source field readers spreads the partitions over " +
		"readers with Flink's owner function (shard and assignment scale across processes)",
	"sink.semantic": "the old name (Flink 1.14 and before) of 'sink.delivery-guarantee', which Flink's current connector " +
		"no longer reads; use 'sink.delivery-guarantee' ('none', 'at-least-once' or 'exactly-once')",
	"sink.transaction-naming-strategy": "connectd names its transactional ids after 'sink.transactional-id-prefix' its " +
		"own way (kafka_sink field transactional_id_prefix) and keeps none of Flink's pooled ids",
}
