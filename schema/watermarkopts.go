package schema

import "fmt"

// emitStrategy checks FLIP-296's scan.watermark.emit.strategy. kafka_source
// stamps every record with the watermark as it stands after that record,
// which is Flink's on-event; on-periodic (emit only every
// pipeline.auto-watermark-interval) it does not do, and says so.
func emitStrategy(v string) error {
	switch v {
	case "on-event":
		return nil
	case "on-periodic":
		return fmt.Errorf("not supported: kafka_source stamps each record with the watermark after it, which is 'on-event'; " +
			"drop the option or set 'on-event' (the periodic part, idleness re-evaluation, is kafka_source's watermark.emit_interval)")
	}
	return fmt.Errorf("want on-event or on-periodic")
}
