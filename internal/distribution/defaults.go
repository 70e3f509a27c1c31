package distribution

import "github.com/redpanda-data/benthos/v4/public/service"

// Defaults of the main config that connectd sets differently from Benthos.
// They are defaults: a config (or `--set`) that sets the field wins.
const (
	// DefaultHTTPAddress is where the HTTP server (/metrics, /ready,
	// /ping, the debug endpoints) listens: loopback only, so that a
	// pipeline started anywhere does not publish its metrics and
	// endpoints on every interface. Benthos's default is 0.0.0.0:4195;
	// `http.address: 0.0.0.0:4195` opens it again.
	DefaultHTTPAddress = "127.0.0.1:4195"
	// DefaultHTTPRootPath is the prefix under which the endpoints are
	// registered too (Benthos: /benthos); they are always at the root as
	// well.
	DefaultHTTPRootPath = "/connectd"
	// ServiceField and ServiceName are the static field every log line
	// carries (Benthos: @service=benthos).
	ServiceField = "@service"
	ServiceName  = Name
)

// MainSchema returns Benthos's full config schema with connectd's defaults:
// what `connectd run`, `lint`, `echo`, `create` and `list` use.
func MainSchema(version, dateBuilt string) *service.ConfigSchema {
	s := service.GlobalEnvironment().FullConfigSchema(version, dateBuilt)
	s.SetFieldDefault(DefaultHTTPAddress, "http", "address")
	s.SetFieldDefault(DefaultHTTPRootPath, "http", "root_path")
	s.SetFieldDefault(map[string]any{ServiceField: ServiceName}, "logger", "static_fields")
	return s
}
