package prometheus

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/speclint"
)

type config struct {
	useHistogramTiming bool
	histogramBuckets   []float64
	summaryObjectives  map[float64]float64
	addProcessMetrics  bool
	addGoMetrics       bool
	pushURL            string
	pushInterval       time.Duration
	pushJobName        string
}

// configFromParsed reads and validates the exporter's config, reporting
// every problem at once. `connectd lint` runs it too (speclint.Register).
func configFromParsed(conf *service.ParsedConfig) (config, error) {
	var (
		c    config
		err  error
		errs []error
	)
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	c.useHistogramTiming, err = conf.FieldBool(fieldUseHistogramTiming)
	keep(err)
	c.histogramBuckets, err = conf.FieldFloatList(fieldHistogramBuckets)
	keep(err)
	objs, err := conf.FieldObjectList(fieldSummaryObjectives)
	keep(err)
	c.summaryObjectives = make(map[float64]float64, len(objs))
	for _, o := range objs {
		q, err := o.FieldFloat(fieldQuantile)
		keep(err)
		e, err := o.FieldFloat(fieldError)
		keep(err)
		c.summaryObjectives[q] = e
	}
	c.addProcessMetrics, err = conf.FieldBool(fieldAddProcessMetrics)
	keep(err)
	c.addGoMetrics, err = conf.FieldBool(fieldAddGoMetrics)
	keep(err)
	c.pushURL, err = conf.FieldString(fieldPushURL)
	keep(err)
	if c.pushInterval, err = speclint.Duration(conf, fieldPushInterval); err != nil {
		// Reported once; validate sees the default.
		errs = append(errs, err)
		c.pushInterval, _ = time.ParseDuration(defaultPushInterval)
	}
	c.pushJobName, err = conf.FieldString(fieldPushJobName)
	keep(err)
	return c, errors.Join(append(errs, c.validate())...)
}

func (c config) validate() error {
	var errs []error
	for q, e := range c.summaryObjectives {
		if q < 0 || q > 1 {
			errs = append(errs, fmt.Errorf("field %s: quantile %v outside [0, 1]", fieldSummaryObjectives, q))
		}
		if e < 0 || e > 1 {
			errs = append(errs, fmt.Errorf("field %s: error %v of quantile %v outside [0, 1]", fieldSummaryObjectives, e, q))
		}
	}
	for i := 1; i < len(c.histogramBuckets); i++ {
		if c.histogramBuckets[i] <= c.histogramBuckets[i-1] {
			errs = append(errs, fmt.Errorf("field %s: buckets must increase, got %v after %v", fieldHistogramBuckets, c.histogramBuckets[i], c.histogramBuckets[i-1]))
		}
	}
	if c.pushURL != "" {
		if u, err := url.Parse(c.pushURL); err != nil || u.Scheme == "" || u.Host == "" {
			errs = append(errs, fmt.Errorf("field %s: %q is not an absolute URL", fieldPushURL, c.pushURL))
		}
		if c.pushInterval <= 0 {
			errs = append(errs, fmt.Errorf("field %s: must be positive with %s set, got %v", fieldPushInterval, fieldPushURL, c.pushInterval))
		}
	}
	return errors.Join(errs...)
}
