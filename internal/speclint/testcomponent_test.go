package speclint

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// The test component: an output whose validator checks a mode and a count,
// and names every field it reads, as connectd's components do.
const testOutput = "speclint_test_output"

func testSpec() *service.ConfigSpec {
	return service.NewConfigSpec().Fields(
		service.NewIntField("max_in_flight").Default(1),
		service.NewBoolField("enabled").Default(false),
		service.NewDurationField("timeout").Default("1s"),
		service.NewStringEnumField("mode", "fast", "safe").Default("safe"),
		service.NewStringListField("topics").Optional(),
		service.NewStringMapField("labels").Optional(),
		service.NewObjectField("batching",
			service.NewIntField("count").Default(0),
			service.NewFloatField("ratio").Default(0.5),
		),
		service.NewAnyField("anything").Optional(),
	)
}

func validateTestOutput(conf *service.ParsedConfig) error {
	var errs []error
	if n, err := conf.FieldInt("max_in_flight"); err != nil {
		errs = append(errs, err)
	} else if n < 1 {
		errs = append(errs, fmt.Errorf("field max_in_flight: must be at least 1, got %d", n))
	}
	if _, err := Duration(conf, "timeout"); err != nil {
		errs = append(errs, err)
	}
	if m, _ := conf.FieldString("mode"); m != "fast" && m != "safe" {
		errs = append(errs, fmt.Errorf("field mode: unknown value %q (want fast or safe)", m))
	}
	if n, _ := conf.FieldInt("batching", "count"); n < 0 {
		errs = append(errs, fmt.Errorf("field batching.count: must not be negative, got %d", n))
	}
	if topics, _ := conf.FieldStringList("topics"); strings.Contains(strings.Join(topics, ","), "bad") {
		errs = append(errs, errors.New("field topics: no topic may be called bad"))
	}
	return errors.Join(errs...)
}

func init() {
	spec := testSpec()
	Register(Output, testOutput, spec, validateTestOutput)
	if err := service.RegisterBatchOutput(testOutput, spec,
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			return nil, service.BatchPolicy{}, 1, errors.New("not for running")
		}); err != nil {
		panic(err)
	}
}

// testSentinel has the spec of testOutput and a validator that always
// reports one problem: whether a lint shows it tells whether Benthos ran the
// lint rule.
const testSentinel = "speclint_test_sentinel"

const sentinelProblem = "field sentinel: the lint rule ran"

func init() {
	spec := testSpec()
	Register(Output, testSentinel, spec, func(*service.ParsedConfig) error { return errors.New(sentinelProblem) })
	if err := service.RegisterBatchOutput(testSentinel, spec,
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			return nil, service.BatchPolicy{}, 1, errors.New("not for running")
		}); err != nil {
		panic(err)
	}
}
