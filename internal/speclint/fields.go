package speclint

import (
	"fmt"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Duration reads a Go duration field as service.ParsedConfig.FieldDuration
// does, with an error that names the field and says what a duration looks
// like.
func Duration(conf *service.ParsedConfig, path ...string) (time.Duration, error) {
	field := strings.Join(path, ".")
	s, err := conf.FieldString(path...)
	if err != nil {
		return 0, fmt.Errorf("field %s: %w", field, err)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("field %s: expected a Go duration such as \"500ms\", \"5s\" or \"1m\", got %q", field, s)
	}
	return d, nil
}

// OptionalDuration is Duration for an optional field without a default:
// absent, or empty as `connectd create` prints such a field, it is unset
// (set false, no error).
func OptionalDuration(conf *service.ParsedConfig, path ...string) (d time.Duration, set bool, err error) {
	if !conf.Contains(path...) {
		return 0, false, nil
	}
	if s, err := conf.FieldString(path...); err == nil && strings.TrimSpace(s) == "" {
		return 0, false, nil
	}
	d, err = Duration(conf, path...)
	return d, err == nil, err
}
