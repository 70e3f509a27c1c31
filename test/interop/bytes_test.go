package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// compareBytes reads the records Flink wrote (flinkTopic) and those
// connectd wrote from the same rows (connectdTopic), pairs them by row id
// (the record key when there is one, else the value's first field: the id
// column of a json object or a csv line), and requires the same value
// bytes for each id.
func compareBytes(t *testing.T, tb table, brokers, flinkTopic, connectdTopic string) {
	t.Helper()
	want := len(tb.rowIndexes())
	flink := valuesByID(t, tb, brokers, flinkTopic, want)
	connectd := valuesByID(t, tb, brokers, connectdTopic, want)
	for id, fv := range flink {
		cv, ok := connectd[id]
		switch {
		case !ok:
			t.Errorf("row %s: Flink wrote %q; connectd wrote no record for it", id, fv)
		case !bytes.Equal(fv, cv):
			t.Errorf("row %s: Flink wrote %q (%x), connectd %q (%x)", id, fv, fv, cv, cv)
		}
	}
	if len(connectd) != len(flink) {
		t.Errorf("connectd wrote %d rows, Flink %d", len(connectd), len(flink))
	}
}

// valuesByID reads n records of topic (read committed) and returns their
// values by row id; a record without a value is "<null>".
func valuesByID(t *testing.T, tb table, brokers, topic string, n int) map[string][]byte {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := map[string][]byte{}
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: read %d of %d records", topic, len(out), n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetching %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			id, err := rowID(r)
			if err != nil {
				t.Fatalf("%s offset %d: %v", topic, r.Offset, err)
			}
			v := r.Value
			if v == nil {
				v = []byte("<null>")
			}
			out[id] = v
		})
	}
	return out
}

// rowID is the id column of a record: its JSON key's id, else the first
// field of its json or csv value.
func rowID(r *kgo.Record) (string, error) {
	if r.Key != nil {
		var k struct{ ID json.Number }
		if err := json.Unmarshal(r.Key, &k); err != nil || k.ID == "" {
			return "", fmt.Errorf("key %q is not {\"id\": n}", r.Key)
		}
		return k.ID.String(), nil
	}
	if bytes.HasPrefix(r.Value, []byte("{")) {
		dec := json.NewDecoder(bytes.NewReader(r.Value))
		dec.UseNumber()
		var v struct{ ID json.Number }
		if err := dec.Decode(&v); err != nil || v.ID == "" {
			return "", fmt.Errorf("value %q has no id", r.Value)
		}
		return v.ID.String(), nil
	}
	first, _, _ := bytes.Cut(r.Value, []byte(","))
	if len(first) == 0 {
		return "", fmt.Errorf("value %q has no id field", r.Value)
	}
	return string(first), nil
}
