package eventwindow

import "github.com/connectd/connectd/internal/metricdoc"

// metricDocs is the table of the buffer's metrics (internal/metricdoc): the
// help texts of /metrics. The spec's Metrics section lists the same metrics
// (a test holds them to each other).
var metricDocs = []metricdoc.Metric{
	{Name: "event_window_open", Kind: metricdoc.Gauge,
		Help: "Windows open: assigned records and not fired yet."},
	{Name: "event_window_watermark_ms", Kind: metricdoc.Gauge,
		Help: "The buffer's watermark, Unix milliseconds."},
	{Name: "event_window_fired", Kind: metricdoc.Counter,
		Help: "Windows fired: results emitted."},
	{Name: "event_window_late_dropped", Kind: metricdoc.Counter,
		Help: "Records dropped because every window they belong to had fired (late: drop)."},
	{Name: "event_window_late_errored", Kind: metricdoc.Counter,
		Help: "Records passed on with an error because every window they belong to had fired (late: error)."},
	{Name: "event_window_bad_records", Kind: metricdoc.Counter,
		Help: "Records passed on with an error: no event time, key or aggregate value could be read."},
	{Name: "event_window_result_nacked", Kind: metricdoc.Counter,
		Help: "Window results the output did not deliver; each is handed out again."},
	{Name: "event_window_replays_skipped", Kind: metricdoc.Counter,
		Help: "Records read again after a restart whose windows' results are in the output already."},
	{Name: "event_window_replayed_sessions_dropped", Kind: metricdoc.Counter,
		Help: "Sessions rebuilt from replayed records whose results are in the output already, dropped unfired."},
	{Name: "event_window_keys_from_several_partitions", Kind: metricdoc.Counter,
		Help: "Window keys whose records of one window came from more than one partition while other processes read some of the partitions: their results are partial."},
}

func init() { metricdoc.Register(metricDocs...) }
