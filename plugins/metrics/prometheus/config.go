package prometheus

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
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

func configFromParsed(conf *service.ParsedConfig) (config, error) {
	var c config
	var err error
	if c.useHistogramTiming, err = conf.FieldBool(fieldUseHistogramTiming); err != nil {
		return c, err
	}
	if c.histogramBuckets, err = conf.FieldFloatList(fieldHistogramBuckets); err != nil {
		return c, err
	}
	objs, err := conf.FieldObjectList(fieldSummaryObjectives)
	if err != nil {
		return c, err
	}
	c.summaryObjectives = make(map[float64]float64, len(objs))
	for _, o := range objs {
		q, err := o.FieldFloat(fieldQuantile)
		if err != nil {
			return c, err
		}
		e, err := o.FieldFloat(fieldError)
		if err != nil {
			return c, err
		}
		c.summaryObjectives[q] = e
	}
	if c.addProcessMetrics, err = conf.FieldBool(fieldAddProcessMetrics); err != nil {
		return c, err
	}
	if c.addGoMetrics, err = conf.FieldBool(fieldAddGoMetrics); err != nil {
		return c, err
	}
	if c.pushURL, err = conf.FieldString(fieldPushURL); err != nil {
		return c, err
	}
	if c.pushInterval, err = conf.FieldDuration(fieldPushInterval); err != nil {
		return c, err
	}
	if c.pushJobName, err = conf.FieldString(fieldPushJobName); err != nil {
		return c, err
	}
	return c, c.validate()
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
