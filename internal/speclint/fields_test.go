package speclint

import (
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// An optional duration is unset when absent or empty, and a bad value is
// an error naming the field.
func TestOptionalDuration(t *testing.T) {
	t.Parallel()
	spec := service.NewConfigSpec().Fields(service.NewDurationField("every").Optional())
	for _, tc := range []struct {
		yaml    string
		want    time.Duration
		set     bool
		wantErr bool
	}{
		{yaml: "{}"},
		{yaml: `every: ""`},
		{yaml: "every: 3s", want: 3 * time.Second, set: true},
		{yaml: "every: soon", wantErr: true},
	} {
		conf, err := spec.ParseYAML(tc.yaml, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, set, err := OptionalDuration(conf, "every")
		if d != tc.want || set != tc.set || (err != nil) != tc.wantErr {
			t.Errorf("%s: got %v, %v, %v; want %v, %v, error %v", tc.yaml, d, set, err, tc.want, tc.set, tc.wantErr)
		}
		if err != nil && err.Error()[:11] != "field every" {
			t.Errorf("%s: error %q does not name the field", tc.yaml, err)
		}
	}
}
