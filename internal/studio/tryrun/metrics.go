package tryrun

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Metrics are a run's live figures, from the child's /metrics.
type Metrics struct {
	At               time.Time `json:"at"`
	RecordsIn        float64   `json:"records_in"`
	RecordsOut       float64   `json:"records_out"`
	RecordsInPerSec  float64   `json:"records_in_per_sec"`
	RecordsOutPerSec float64   `json:"records_out_per_sec"`
	// KafkaSourceLag is kafka_source_lag summed over partitions; nil
	// without a kafka_source.
	KafkaSourceLag *float64 `json:"kafka_source_lag,omitempty"`
	// WatermarkMs is the lowest kafka_source_watermark_ms; nil without
	// a watermark, before the first one and after the end-of-input one
	// (Series keeps the gauge's own value).
	WatermarkMs *float64 `json:"watermark_ms,omitempty"`
	// Series are the samples of kafka_* and the Benthos counters below,
	// summed over their labels.
	Series map[string]float64 `json:"series"`
}

// benthosSeries are the Benthos metrics kept in Series.
var benthosSeries = []string{"input_received", "output_sent", "output_error", "processor_error"}

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseText reads the Prometheus text exposition format (the subset
// client_golang writes: no timestamps needed, comments skipped).
func parseText(r io.Reader) ([]sample, error) {
	var out []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}}
		rest := line
		if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
			s.name = line[:i]
			end := labelsEnd(line, i)
			if end < 0 {
				continue
			}
			parseLabels(line[i+1:end], s.labels)
			rest = strings.TrimSpace(line[end+1:])
		} else if i >= 0 {
			s.name, rest = line[:i], strings.TrimSpace(line[i:])
		} else {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		s.value = v
		out = append(out, s)
	}
	return out, sc.Err()
}

// labelsEnd is the index of the } closing the labels opened at open.
func labelsEnd(line string, open int) int {
	quoted := false
	for i := open + 1; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == '}' && !quoted:
			return i
		}
	}
	return -1
}

func parseLabels(s string, into map[string]string) {
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return
		}
		name := strings.TrimSpace(strings.TrimPrefix(s[:eq], ","))
		var val strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[i])
				}
				continue
			}
			val.WriteByte(s[i])
		}
		into[name] = val.String()
		s = strings.TrimLeft(s[min(i+1, len(s)):], ", ")
	}
}

// tapPath is the Benthos path of the capture output in the child's
// config (output.broker.outputs.1; the original output is outputs.0).
const tapPath = "root.output.broker.outputs.1"

// noWatermark bounds the watermarks shown as times: beyond it a gauge
// holds math.MinInt64 (no watermark yet) or math.MaxInt64 (end of input).
const noWatermark = 1 << 62

// summarise turns a scrape into Metrics; prev (nil for the first) gives
// the rates.
func summarise(samples []sample, at time.Time, prev *Metrics) *Metrics {
	m := &Metrics{At: at, Series: map[string]float64{}}
	watermark := math.Inf(1)
	var lag float64
	haveLag := false
	for _, s := range samples {
		switch {
		case s.name == "input_received":
			// Only the inputs that read count (a broker does not count
			// its children's messages again).
			m.RecordsIn += s.value
		case s.name == "output_sent" && !strings.HasPrefix(s.labels["path"], tapPath):
			// Likewise the outputs that write, the tap excluded.
			m.RecordsOut += s.value
		case s.name == "kafka_source_lag":
			lag += s.value
			haveLag = true
		case s.name == "kafka_source_watermark_ms" && math.Abs(s.value) < noWatermark:
			// Not the math.MinInt64 of "none yet" nor the math.MaxInt64
			// of the end of a bounded input: a time a page can show.
			watermark = math.Min(watermark, s.value)
		}
		if strings.HasPrefix(s.labels["path"], tapPath) {
			continue
		}
		if strings.HasPrefix(s.name, "kafka_") || contains(benthosSeries, s.name) {
			m.Series[s.name] += s.value
		}
	}
	if haveLag {
		m.KafkaSourceLag = &lag
	}
	if !math.IsInf(watermark, 1) {
		m.WatermarkMs = &watermark
	}
	if prev != nil {
		if dt := at.Sub(prev.At).Seconds(); dt > 0 {
			m.RecordsInPerSec = math.Max(0, (m.RecordsIn-prev.RecordsIn)/dt)
			m.RecordsOutPerSec = math.Max(0, (m.RecordsOut-prev.RecordsOut)/dt)
		}
	}
	return m
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}
