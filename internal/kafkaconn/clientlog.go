package kafkaconn

import (
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file routes the Kafka client's own log lines (franz-go's
// kgo.Logger) into the component's logger, for field client_log_level: the
// Java client's log4j logger `org.apache.kafka` that Flink users raise to
// DEBUG to see connections, metadata, fetch sessions and transactions.

// Client log levels, the values of field client_log_level.
const (
	ClientLogNone  = "none"
	ClientLogError = "error"
	ClientLogWarn  = "warn"
	ClientLogInfo  = "info"
	ClientLogDebug = "debug"
)

// clientLogLevels maps field client_log_level to franz-go's levels.
var clientLogLevels = map[string]kgo.LogLevel{
	ClientLogNone:  kgo.LogLevelNone,
	ClientLogError: kgo.LogLevelError,
	ClientLogWarn:  kgo.LogLevelWarn,
	ClientLogInfo:  kgo.LogLevelInfo,
	ClientLogDebug: kgo.LogLevelDebug,
}

// parseClientLogLevel returns the franz-go level of a client_log_level
// value.
func parseClientLogLevel(s string) (kgo.LogLevel, error) {
	if l, ok := clientLogLevels[strings.ToLower(s)]; ok {
		return l, nil
	}
	return kgo.LogLevelNone, fmt.Errorf("field %s: unknown value %q (want %s, %s, %s, %s or %s)",
		FieldClientLogLevel, s, ClientLogNone, ClientLogError, ClientLogWarn, ClientLogInfo, ClientLogDebug)
}

// LogClientTo returns c with the Kafka client's log lines, at
// ClientLogLevel and above, written to log (at their own level, prefixed
// "kafka client: ", with the client's key-value pairs as fields).
func (c Config) LogClientTo(log *service.Logger) Config {
	c.clientLog = log
	return c
}

// clientLogger is a kgo.Logger writing to a component's logger.
type clientLogger struct {
	level kgo.LogLevel
	log   *service.Logger
}

// Level is the level below which franz-go does not build log lines.
func (l clientLogger) Level() kgo.LogLevel { return l.level }

// Log writes one line of the client.
func (l clientLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	log := l.log
	if len(keyvals) > 0 {
		log = log.With(keyvals...)
	}
	switch level {
	case kgo.LogLevelError:
		log.Errorf("kafka client: %s", msg)
	case kgo.LogLevelWarn:
		log.Warnf("kafka client: %s", msg)
	case kgo.LogLevelInfo:
		log.Infof("kafka client: %s", msg)
	case kgo.LogLevelDebug:
		log.Debugf("kafka client: %s", msg)
	}
}
