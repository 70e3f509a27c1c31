package metricdoc

// Benthos's own metrics that a connectd pipeline emits through the exporter
// (Benthos v4's internal/component packages). Benthos labels each with the
// component's `label` and `path`.
var benthos = []Metric{
	{Name: "input_received", Kind: Counter, Help: "Messages the input read and handed to the pipeline."},
	{Name: "input_connection_up", Kind: Counter, Help: "Times the input connected."},
	{Name: "input_connection_failed", Kind: Counter, Help: "Connection attempts of the input that failed."},
	{Name: "input_connection_lost", Kind: Counter, Help: "Times the input lost its connection."},
	{Name: "input_latency_ns", Kind: Timer, Help: "Time from the input reading a batch to the pipeline acknowledging it."},
	{Name: "processor_received", Kind: Counter, Help: "Messages the processor received."},
	{Name: "processor_batch_received", Kind: Counter, Help: "Batches the processor received."},
	{Name: "processor_sent", Kind: Counter, Help: "Messages the processor passed on."},
	{Name: "processor_batch_sent", Kind: Counter, Help: "Batches the processor passed on."},
	{Name: "processor_error", Kind: Counter, Help: "Messages the processor flagged with an error."},
	{Name: "processor_latency_ns", Kind: Timer, Help: "Time the processor took per batch."},
	{Name: "buffer_received", Kind: Counter, Help: "Messages written to the buffer."},
	{Name: "buffer_batch_received", Kind: Counter, Help: "Batches written to the buffer."},
	{Name: "buffer_sent", Kind: Counter, Help: "Messages the buffer passed on."},
	{Name: "buffer_batch_sent", Kind: Counter, Help: "Batches the buffer passed on."},
	{Name: "buffer_latency_ns", Kind: Timer, Help: "Time from the buffer passing a batch on to its acknowledgement."},
	{Name: "output_sent", Kind: Counter, Help: "Messages the output wrote."},
	{Name: "output_batch_sent", Kind: Counter, Help: "Batches the output wrote."},
	{Name: "output_error", Kind: Counter, Help: "Batches the output failed to write."},
	{Name: "output_connection_up", Kind: Counter, Help: "Times the output connected."},
	{Name: "output_connection_failed", Kind: Counter, Help: "Connection attempts of the output that failed."},
	{Name: "output_connection_lost", Kind: Counter, Help: "Times the output lost its connection."},
	{Name: "output_latency_ns", Kind: Timer, Help: "Time the output took to write a batch."},
	{Name: "batch_created", Kind: Counter, Labels: []string{"mechanism"}, Help: "Batches a batching policy flushed, by what flushed them (count, size, period, check)."},
	{Name: "rate_limit_checked", Kind: Counter, Help: "Times the rate limit was asked for access."},
	{Name: "rate_limit_triggered", Kind: Counter, Help: "Times the rate limit made a caller wait."},
	{Name: "rate_limit_error", Kind: Counter, Help: "Rate limit checks that failed."},
	{Name: "cache_success", Kind: Counter, Labels: []string{"operation"}, Help: "Cache operations that succeeded, by operation."},
	{Name: "cache_error", Kind: Counter, Labels: []string{"operation"}, Help: "Cache operations that failed, by operation."},
	{Name: "cache_not_found", Kind: Counter, Labels: []string{"operation"}, Help: "Cache reads of a key that was not there, by operation."},
	{Name: "cache_duplicate", Kind: Counter, Labels: []string{"operation"}, Help: "Cache adds of a key that was there already, by operation."},
	{Name: "cache_latency_ns", Kind: Timer, Labels: []string{"operation"}, Help: "Time a cache operation took, by operation."},
	{Name: "http_request_latency_ns", Kind: Timer, Help: "Time an HTTP client request took."},
}

func init() { Register(benthos...) }
