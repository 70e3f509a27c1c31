// Package prometheus registers the `prometheus` metrics exporter: Benthos
// metrics as Prometheus collectors (client_golang), served at `/metrics` on
// the Benthos HTTP server and optionally pushed to a Pushgateway. Registering
// it under the name `prometheus` makes it connectd's default metrics type.
package prometheus

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/speclint"
)

const (
	fieldUseHistogramTiming = "use_histogram_timing"
	fieldHistogramBuckets   = "histogram_buckets"
	fieldSummaryObjectives  = "summary_quantiles_objectives"
	fieldQuantile           = "quantile"
	fieldError              = "error"
	fieldAddProcessMetrics  = "add_process_metrics"
	fieldAddGoMetrics       = "add_go_metrics"
	fieldPushURL            = "push_url"
	fieldPushInterval       = "push_interval"
	fieldPushJobName        = "push_job_name"
)

// Defaults, declared once: the spec uses them.
const (
	defaultPushInterval = "10s"
	defaultPushJobName  = "connectd"
)

// Spec is the config spec of the exporter.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Stable().
		Summary("Host endpoints (`/metrics` and `/stats`) for Prometheus scraping.").
		Description(`The default metrics exporter of connectd. Metrics are served on the Benthos HTTP server (`+"`http.address`"+`, default `+"`127.0.0.1:4195`"+` in connectd, loopback only) at `+"`/metrics`"+` in the Prometheus text format.

Metric names are the Benthos names (`+"`input_received`"+`, `+"`output_latency_ns`"+`, ...) with characters that Prometheus does not allow replaced by `+"`_`"+`; labels are the Benthos labels (`+"`label`"+`, `+"`path`"+`, and those a component adds such as `+"`topic`"+`). This is the counterpart of Flink's metric reporters (`+"`metrics.reporter.prom.*`"+`).

Each metric's `+"`# HELP`"+` line says in one line what it counts or measures and its unit: the texts of the bundle's components
(listed in each component's Metrics section) and of Benthos's own families (`+"`input_*`"+`, `+"`processor_*`"+`, `+"`output_*`"+`,
`+"`buffer_*`"+`, `+"`batch_created`"+`, `+"`cache_*`"+`, `+"`rate_limit_*`"+`). A timer's text ends with its unit, nanoseconds in a summary
or seconds with `+"`use_histogram_timing`"+`. A metric no table documents (from a plugin outside the bundle) reads
`+"`<kind> <name> (no help text registered)`"+`.`).
		Fields(
			service.NewBoolField(fieldUseHistogramTiming).
				Description("Record timing metrics as histograms (seconds) instead of summaries (nanoseconds, as the `_ns` names say). Default `false`. Flink has no equivalent (its Prometheus reporter exports histograms as summaries).").
				Default(false).
				Advanced(),
			service.NewFloatListField(fieldHistogramBuckets).
				Description("Bucket upper bounds, in seconds, of timing histograms. Only with `use_histogram_timing`. Default empty: the client_golang default buckets (5ms to 10s). Flink has no equivalent.").
				Default([]any{}).
				Advanced(),
			service.NewObjectListField(fieldSummaryObjectives,
				service.NewFloatField(fieldQuantile).Description("Quantile, between 0 and 1. No default: required in each entry. Flink has no equivalent."),
				service.NewFloatField(fieldError).Description("Allowed absolute error of the quantile. No default: required in each entry. Flink has no equivalent."),
			).
				Description("Quantiles and their errors for timing summaries. Default: 0.5, 0.9 and 0.99. Flink has no equivalent (its reporter uses fixed quantiles).").
				Default([]any{
					map[string]any{fieldQuantile: 0.5, fieldError: 0.05},
					map[string]any{fieldQuantile: 0.9, fieldError: 0.01},
					map[string]any{fieldQuantile: 0.99, fieldError: 0.001},
				}).
				Advanced(),
			service.NewBoolField(fieldAddProcessMetrics).
				Description("Also export process metrics (CPU, RSS, open files) as `process_*`. Default `false`. Flink equivalent: the JVM `Status.JVM.*` metrics.").
				Default(false).
				Advanced(),
			service.NewBoolField(fieldAddGoMetrics).
				Description("Also export Go runtime metrics as `go_*`. Default `false`. Flink equivalent: the JVM `Status.JVM.*` metrics.").
				Default(false).
				Advanced(),
			service.NewStringField(fieldPushURL).
				Description("Prometheus Pushgateway URL to push metrics to every `push_interval`, as well as serving `/metrics`. Default empty: no push. Flink option: `metrics.reporter.promgateway.hostUrl`.").
				Default("").
				Advanced(),
			service.NewDurationField(fieldPushInterval).
				Description("Period between pushes to `push_url` (Go duration). Default `10s`. Flink option: `metrics.reporter.promgateway.interval`.").
				Default(defaultPushInterval).
				Advanced(),
			service.NewStringField(fieldPushJobName).
				Description("Job name of pushed metrics. Default `connectd`. Flink option: `metrics.reporter.promgateway.jobName`.").
				Default(defaultPushJobName).
				Advanced(),
		)
}

func init() {
	spec := Spec()
	speclint.Register(speclint.Metrics, "prometheus", spec, func(conf *service.ParsedConfig) error {
		_, err := configFromParsed(conf)
		return err
	})
	err := service.RegisterMetricsExporter("prometheus", spec, func(conf *service.ParsedConfig, log *service.Logger) (service.MetricsExporter, error) {
		c, err := configFromParsed(conf)
		if err != nil {
			return nil, err
		}
		return newExporter(c, log)
	})
	if err != nil {
		panic(err)
	}
}
