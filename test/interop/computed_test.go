package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafkatest"
	tablecodec "github.com/connectd/connectd/internal/table"
	"github.com/connectd/connectd/schema"
)

// computedPhysical are the physical and metadata columns of the computed-
// column table; computedRecords are its records (value JSON, record
// timestamp ms).
const computedPhysical = `  id INT,
  s STRING,
  n INT,
  d DOUBLE,
  ms BIGINT,
  tss STRING,
  ts TIMESTAMP(3),
  j STRING,
  arr ARRAY<STRING>,
  m MAP<STRING, INT>,
  amt DECIMAL(10, 2),
  rt TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  p BIGINT METADATA FROM 'partition' VIRTUAL,
  off DECIMAL(20, 0) METADATA FROM 'offset' VIRTUAL`

// computedRecords: NULLs, non-ASCII text, the New York spring-forward gap
// (2024-03-10 02:30) and fall-back overlap (2024-11-03 01:30), the epoch,
// a millisecond before midnight.
var computedRecords = []struct {
	value string
	tsMs  int64
}{
	{`{"id":1}`, 1710052200000},
	{`{"id":2,"s":"straße ça İ Σ","n":5,"d":2.345,"ms":1710052200000,"tss":"2024-03-10 02:30:00","ts":"2024-03-10 02:30:00.789",` +
		`"j":"{\"a\":{\"b\":[1,2.50,\"x\",true]}}","arr":["x","y"],"m":{"k":1},"amt":1.50}`, 1710052200000},
	{`{"id":3,"s":"  abc,def,,g  ","n":-3,"d":-0.5,"ms":1730611800000,"tss":"2024-11-03 01:30:00","ts":"2024-11-03 01:30:00",` +
		`"j":"{\"n\":\"7\"}","arr":[],"m":{},"amt":-2.35}`, 1730611800000},
	{`{"id":4,"s":"😀é","n":0,"d":1.0E10,"ms":0,"tss":"1970-01-01 00:00:00","ts":"1999-12-31 23:59:59.999","j":"bad","arr":["only"],"amt":0.00}`, 0},
}

// computedColumns are the computed columns: every supported function.
var computedColumns = [][2]string{
	{"c_upper", "UPPER(s)"}, {"c_lower", "LOWER(s)"}, {"c_len", "CHAR_LENGTH(s)"}, {"c_trim", "TRIM(s)"},
	{"c_trim2", "TRIM(BOTH ' a' FROM s)"}, {"c_trim3", "TRIM(LEADING ' ' FROM s)"},
	{"c_concat", "CONCAT(s, '-', CAST(n AS STRING))"}, {"c_pipe", "s || '|' || CAST(n AS STRING)"},
	{"c_sub1", "SUBSTRING(s FROM 2 FOR 3)"}, {"c_sub2", "SUBSTRING(s, -2)"}, {"c_sub3", "SUBSTRING(s, 0, 2)"},
	{"c_repl", "REPLACE(s, 'a', 'XY')"}, {"c_re", "REGEXP_EXTRACT(s, '([a-z]+),([a-z]+)', 2)"}, {"c_re0", "REGEXP_EXTRACT(s, '[a-z]+')"},
	{"c_split", "SPLIT_INDEX(s, ',', 1)"}, {"c_split2", "SPLIT_INDEX(s, ',', 2)"},
	{"c_json", "JSON_VALUE(j, '$.a.b[1]')"}, {"c_json2", "JSON_VALUE(j, '$.a.b[0]' RETURNING INT)"}, {"c_json3", "JSON_VALUE(j, '$.a')"},
	{"c_json4", "JSON_VALUE(j, '$.a.b[3]')"},
	{"c_coal", "COALESCE(n, 42)"}, {"c_coal2", "COALESCE(s, 'dflt')"}, {"c_if", "IF(n > 0, 'pos', 'nonpos')"},
	{"c_nullif", "NULLIF(n, 5)"}, {"c_eq", "n = 5"}, {"c_ne", "n <> 5"}, {"c_in", "n IN (5, 0)"}, {"c_isnull", "n IS NULL"},
	{"c_case", "CASE WHEN n > 1 THEN 'big' WHEN n = 0 THEN 'zero' ELSE 'other' END"},
	{"c_arith", "n * d"}, {"c_div", "n / 2"}, {"c_plus", "n + 1"},
	{"c_arr", "arr[1]"}, {"c_arr2", "arr[2]"}, {"c_map", "m['k']"},
	{"c_dec", "CAST(d AS DECIMAL(10, 2))"}, {"c_decs", "CAST(amt AS STRING)"}, {"c_dstr", "CAST(d AS STRING)"},
	{"c_bstr", "CAST(n > 0 AS STRING)"}, {"c_int", "CAST(d AS INT)"},
	{"c_tots", "TO_TIMESTAMP(tss)"}, {"c_tots2", "TO_TIMESTAMP(tss, 'yyyy-MM-dd HH:mm:ss')"},
	{"c_tots3", "TO_TIMESTAMP(SUBSTRING(tss, 1, 10), 'yyyy-MM-dd')"},
	{"c_ltz", "TO_TIMESTAMP_LTZ(ms, 3)"}, {"c_ltz0", "TO_TIMESTAMP_LTZ(ms / 1000, 0)"},
	{"c_fu", "FROM_UNIXTIME(ms / 1000)"}, {"c_fu2", "FROM_UNIXTIME(ms / 1000, 'yyyy/MM/dd HH:mm')"},
	{"c_df", "DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss.SSS')"}, {"c_dfl", "DATE_FORMAT(rt, 'yyyy-MM-dd HH:mm EEE')"},
	{"c_dfs", "DATE_FORMAT(tss, 'yyyyMMdd HH')"},
	{"c_ut", "UNIX_TIMESTAMP(tss)"}, {"c_ut2", "UNIX_TIMESTAMP(tss, 'yyyy-MM-dd HH:mm:ss')"},
	{"c_date", "CAST(ts AS DATE)"}, {"c_date2", "CAST(rt AS DATE)"}, {"c_date3", "CAST(SUBSTRING(tss, 1, 10) AS DATE)"},
	{"c_time", "CAST(ts AS TIME)"}, {"c_ts0", "CAST(ts AS TIMESTAMP(0))"}, {"c_lts", "CAST(rt AS TIMESTAMP(3))"},
	{"c_tsl", "CAST(ts AS TIMESTAMP_LTZ(3))"}, {"c_lstr", "CAST(rt AS STRING)"}, {"c_tstr", "CAST(ts AS STRING)"},
}

// nondeterministic are the computed columns of the clock: checked for type
// and for lying between the run's start and end.
var nondeterministic = [][2]string{
	{"c_pt", "PROCTIME()"}, {"c_now", "NOW()"}, {"c_ct", "CURRENT_TIMESTAMP"}, {"c_lt", "LOCALTIMESTAMP"},
	{"c_cd", "CURRENT_DATE"}, {"c_uts", "UNIX_TIMESTAMP()"},
}

// computedZones are the table.local-time-zone values the table is read in.
var computedZones = []string{"UTC", "America/New_York", "Asia/Kolkata"}

// knownComputedMismatches are the differences between Flink and connectd
// that are understood and not fixed: "zone/column/id" -> Flink's value,
// connectd's value and why. A listed difference that no longer happens
// fails the test too.
var knownComputedMismatches = map[string]struct{ flink, connectd, why string }{}

func computedDDL(name, topic, brokers, zone string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n%s", name, computedPhysical)
	for _, c := range append(append([][2]string{}, computedColumns...), nondeterministic...) {
		fmt.Fprintf(&b, ",\n  %s AS %s", c[0], c[1])
	}
	fmt.Fprintf(&b, "\n) WITH (\n  'connector' = 'kafka',\n  'topic' = '%s',\n  'properties.bootstrap.servers' = '%s',\n", topic, brokers)
	b.WriteString("  'scan.startup.mode' = 'earliest-offset',\n  'scan.bounded.mode' = 'latest-offset',\n  'format' = 'json'")
	if zone != "" {
		fmt.Fprintf(&b, ",\n  'table.local-time-zone' = '%s'", zone)
	}
	b.WriteString("\n)")
	return b.String()
}

// TestFlinkComputedColumns makes Flink the referee of computed columns and
// metadata casts: Flink reads the same records with the same CREATE TABLE
// (every supported function as a computed column) under three
// table.local-time-zone settings, and connectd's decoder must give the same
// values and, where its translator knows one, the same result type.
func TestFlinkComputedColumns(t *testing.T) {
	requireFlink(t)
	brokers := kafkatest.Broker(t)
	topic := kafkatest.NewTopic(t, brokers, "interop-computed", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The records carry timestamps from 1970 and 2024: without this the
	// broker's retention deletes them before Flink reads them.
	retention := "-1"
	if _, err := kadm.NewClient(cl).AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: &retention}}, topic); err != nil {
		t.Fatal(err)
	}
	for _, r := range computedRecords {
		rec := &kgo.Record{Value: []byte(r.value), Timestamp: time.UnixMilli(r.tsMs)}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// connectd reads the same records.
	fetch, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer fetch.Close()
	var recs []*kgo.Record
	for len(recs) < len(computedRecords) && ctx.Err() == nil {
		fs := fetch.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetching %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
	}
	if len(recs) != len(computedRecords) {
		t.Fatalf("read back %d records, want %d", len(recs), len(computedRecords))
	}

	// One Flink run per zone: the runner takes table.local-time-zone as
	// --conf (its executeSql does not run SET).
	before := time.Now()
	res := map[string]stmtResult{}
	for i, zone := range computedZones {
		script := flinkScript{conf: map[string]string{schema.OptLocalTimeZone: zone}}
		name := fmt.Sprintf("computed_%d", i)
		create := script.add(computedDDL(name, topic, brokers, ""))
		query := script.add("SELECT * FROM " + name)
		out := runFlink(t, &script)
		if out[create].Err != "" {
			t.Fatalf("zone %s: Flink refuses the table:\n%s\n%s", zone, script.stmts[create], firstLines(out[create].Err, 8))
		}
		res[zone] = out[query]
	}

	seen := map[string]bool{}
	for i, zone := range computedZones {
		q := res[zone]
		if q.Err != "" || q.Done != "query" {
			t.Fatalf("zone %s: Flink's query failed: %s", zone, firstLines(q.Err, 8))
		}
		tables, err := schema.ParseDDL(computedDDL(fmt.Sprintf("computed_%d", i), topic, brokers, zone))
		if err != nil {
			t.Fatal(err)
		}
		tb := tables[0]
		if err := tb.Validate(); err != nil {
			t.Fatalf("zone %s: connectd refuses the table: %v", zone, err)
		}
		codec, err := tablecodec.NewCodec(tb)
		if err != nil {
			t.Fatalf("zone %s: %v", zone, err)
		}
		loc, _ := schema.ParseTimeZone(zone)
		rows := map[string]map[string]any{} // id -> row
		for _, r := range recs {
			row, err := codec.DecodeKafka(ctx, r)
			if err != nil {
				t.Fatalf("zone %s: connectd decoding %s: %v", zone, r.Value, err)
			}
			rows[fmt.Sprint(row["id"])] = row
		}
		after := time.Now()
		if len(q.Rows) != len(recs) {
			t.Fatalf("zone %s: Flink gave %d rows, want %d", zone, len(q.Rows), len(recs))
		}
		for _, fr := range q.Rows {
			flink := map[string]any{}
			for j, col := range q.Columns {
				v, err := decodeJSON(fr.Values[j])
				if err != nil {
					t.Fatal(err)
				}
				flink[col.Name] = v
			}
			id := fmt.Sprint(flink["id"])
			got, ok := rows[id]
			if !ok {
				t.Errorf("zone %s: Flink has id %s, connectd has not", zone, id)
				continue
			}
			for _, col := range q.Columns {
				ft, err := schema.ParseType(strings.TrimSpace(strings.ReplaceAll(col.Type, "*PROCTIME*", "")))
				if err != nil {
					t.Fatalf("Flink's type %q of %s: %v", col.Type, col.Name, err)
				}
				key := zone + "/" + col.Name + "/" + id
				if isNondeterministic(col.Name) {
					if err := checkClock(ft, got[col.Name], flink[col.Name], before, after, loc); err != nil {
						t.Errorf("%s: %v", key, err)
					}
					continue
				}
				want := canonFlinkValue(ft, flink[col.Name])
				have := canonConnectd(ft, got[col.Name])
				known, isKnown := knownComputedMismatches[key]
				switch {
				case want == have && isKnown:
					t.Errorf("%s: listed in knownComputedMismatches but now equal (%s); drop the entry", key, want)
				case want != have && !isKnown:
					t.Errorf("%s (%s): Flink %s, connectd %s", key, exprOf(col.Name), want, have)
				case want != have && (known.flink != want || known.connectd != have):
					t.Errorf("%s: differs otherwise than listed: Flink %s, connectd %s; listed %s / %s", key, want, have, known.flink, known.connectd)
				}
				seen[key] = true
			}
		}
		// The translator's result types are Flink's.
		for _, col := range q.Columns {
			c, ok := tb.Column(col.Name)
			if !ok || c.Kind != schema.Computed {
				continue
			}
			tr, err := schema.TranslateComputed(c.Expr, schema.IntLiterals, tb)
			if err != nil {
				t.Fatal(err)
			}
			ft, _ := schema.ParseType(strings.TrimSpace(strings.ReplaceAll(col.Type, "*PROCTIME*", "")))
			if tr.Type != nil && kindName(tr.Type) != kindName(ft) {
				t.Errorf("zone %s: %s AS %s: connectd's type %s, Flink's %s", zone, c.Name, c.Expr, tr.Type, ft)
			}
		}
	}
	for key := range knownComputedMismatches {
		if !seen[key] {
			t.Errorf("knownComputedMismatches lists %s, which the test did not compare", key)
		}
	}
	t.Logf("compared %d values in %d zones", len(seen), len(computedZones))
}

func isNondeterministic(name string) bool {
	for _, c := range nondeterministic {
		if c[0] == name {
			return true
		}
	}
	return false
}

func exprOf(name string) string {
	for _, c := range append(append([][2]string{}, computedColumns...), nondeterministic...) {
		if c[0] == name {
			return c[1]
		}
	}
	return name
}

// kindName is a type's root for comparing result types: CHAR and VARCHAR
// are both character strings.
func kindName(t *schema.Type) string {
	if t.IsString() {
		return "STRING"
	}
	c := *t
	c.NotNull, c.Length, c.Precision, c.Scale = false, 0, 0, 0
	return strings.SplitN(c.String(), "(", 2)[0]
}

// canonFlinkValue is a value of Json.java as text for comparing.
func canonFlinkValue(t *schema.Type, v any) string {
	if v == nil {
		return "NULL"
	}
	switch t.Kind {
	case schema.KindFloat, schema.KindDouble:
		if s, ok := v.(string); ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return canonFloat(f, t.Kind)
			}
		}
	case schema.KindMap: // Json.java prints a MAP as [[key, value], ...]
		m := map[string]any{}
		if pairs, ok := v.([]any); ok {
			for _, p := range pairs {
				if kv, ok := p.([]any); ok && len(kv) == 2 {
					m[fmt.Sprint(kv[0])] = kv[1]
				}
			}
		}
		b, _ := json.Marshal(m)
		return string(b)
	case schema.KindArray, schema.KindRow:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(v)
}

// canonConnectd is a connectd row value in the text of canonFlinkValue.
func canonConnectd(t *schema.Type, v any) string {
	if v == nil {
		return "NULL"
	}
	switch t.Kind {
	case schema.KindTimestamp:
		if x, ok := v.(time.Time); ok {
			return x.UTC().Format(canonTimestamp)
		}
	case schema.KindTimestampLTZ:
		if x, ok := v.(time.Time); ok {
			return x.UTC().Format(canonTimestamp) + "Z"
		}
	case schema.KindDate:
		if x, ok := v.(time.Time); ok {
			return x.UTC().Format("2006-01-02")
		}
	case schema.KindTime:
		if x, ok := v.(time.Time); ok {
			return x.UTC().Format(canonTime)
		}
	case schema.KindDecimal:
		switch x := v.(type) {
		case float64:
			return strconv.FormatFloat(x, 'f', t.Scale, 64)
		case json.Number:
			return string(x)
		}
	case schema.KindFloat, schema.KindDouble:
		switch x := v.(type) {
		case float64:
			return canonFloat(x, t.Kind)
		case int64:
			return canonFloat(float64(x), t.Kind)
		}
	case schema.KindArray, schema.KindMap, schema.KindRow:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(v)
}

// checkClock checks a value of the clock: connectd's and Flink's of the
// same type, each between before and after (LOCALTIMESTAMP and
// CURRENT_DATE on the zone's wall clock).
func checkClock(t *schema.Type, connectd, flink any, before, after time.Time, loc *time.Location) error {
	lo, hi := before.Add(-time.Second), after.Add(time.Second)
	var bounds [2]string
	switch t.Kind {
	case schema.KindTimestampLTZ:
		bounds = [2]string{lo.UTC().Format(canonTimestamp) + "Z", hi.UTC().Format(canonTimestamp) + "Z"}
	case schema.KindTimestamp:
		bounds = [2]string{lo.In(loc).Format(canonTimestamp), hi.In(loc).Format(canonTimestamp)}
	case schema.KindDate:
		bounds = [2]string{lo.In(loc).Format("2006-01-02"), hi.In(loc).Format("2006-01-02")}
	case schema.KindBigint:
		bounds = [2]string{fmt.Sprintf("%020d", lo.Unix()), fmt.Sprintf("%020d", hi.Unix())}
		pad := func(s string) string {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return s
			}
			return fmt.Sprintf("%020d", n)
		}
		return between(t, pad(canonFlinkValue(t, flink)), pad(canonConnectd(t, connectd)), bounds)
	default:
		return fmt.Errorf("Flink's type %s is not a time", t)
	}
	return between(t, canonFlinkValue(t, flink), canonConnectd(t, connectd), bounds)
}

func between(t *schema.Type, flink, connectd string, bounds [2]string) error {
	for who, v := range map[string]string{"Flink": flink, "connectd": connectd} {
		if v < bounds[0] || v > bounds[1] || v == "NULL" {
			return fmt.Errorf("%s's %s value %s is not within the run [%s, %s]", who, t, v, bounds[0], bounds[1])
		}
	}
	return nil
}
