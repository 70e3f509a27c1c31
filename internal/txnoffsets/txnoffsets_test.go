package txnoffsets

import (
	"context"
	"errors"
	"testing"
)

func TestSameCluster(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		a, b ClusterIdentity
		want bool
	}{
		{"same id, other brokers", ClusterIdentity{ID: "c1", SeedBrokers: []string{"a:9092"}}, ClusterIdentity{ID: "c1", SeedBrokers: []string{"b:9092"}}, true},
		{"other id, same brokers", ClusterIdentity{ID: "c1", SeedBrokers: []string{"a:9092"}}, ClusterIdentity{ID: "c2", SeedBrokers: []string{"a:9092"}}, false},
		{"one id unknown, same brokers in another order", ClusterIdentity{SeedBrokers: []string{"b:1", "A:1 "}}, ClusterIdentity{ID: "c", SeedBrokers: []string{"a:1", "b:1", "b:1"}}, true},
		{"ids unknown, other brokers", ClusterIdentity{SeedBrokers: []string{"a:1"}}, ClusterIdentity{SeedBrokers: []string{"a:1", "b:1"}}, false},
	} {
		if got := SameCluster(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: SameCluster = %v, want %v", tc.name, got, tc.want)
		}
	}
}

type source struct{ Source }

func TestOriginContext(t *testing.T) {
	t.Parallel()
	type other struct{}
	parent := context.WithValue(context.Background(), other{}, "kept")
	src := &source{}
	ctx := WithOrigin(parent, Origin{Source: src, Topic: "t", Partition: 2, Offset: 42})
	o, ok := FromContext(ctx)
	if !ok || o.Source != src || o.Topic != "t" || o.Partition != 2 || o.Offset != 42 {
		t.Fatalf("FromContext = %+v, %v", o, ok)
	}
	if ctx.Value(other{}) != "kept" {
		t.Fatal("the parent's values are lost")
	}
	if _, ok := FromContext(context.Background()); ok {
		t.Fatal("an origin without WithOrigin")
	}
	if _, ok := FromContext(WithOrigin(parent, Origin{})); ok {
		t.Fatal("an origin without a source")
	}
}

// origins is a batch's Origins: its topic and partition, offsets from base.
type origins struct {
	src  Source
	base int64
}

func (o origins) Origin(i int) Origin {
	return Origin{Source: o.src, Topic: "t", Partition: 3, Offset: o.base + int64(i)}
}

// The contexts of a batch each carry their message's origin, read from the
// batch; wrapped as Benthos wraps them (tracing spans) they still do, and
// WithoutOrigin hides it.
func TestBatchContexts(t *testing.T) {
	t.Parallel()
	src := &source{}
	cs := BatchContexts(origins{src: src, base: 100}, 3)
	if len(cs) != 3 {
		t.Fatalf("%d contexts, want 3", len(cs))
	}
	type span struct{}
	for i := range cs {
		ctx := context.WithValue(&cs[i], span{}, "span")
		o, ok := FromContext(ctx)
		if want := (Origin{Source: src, Topic: "t", Partition: 3, Offset: 100 + int64(i)}); !ok || o != want {
			t.Fatalf("context %d: FromContext = %+v, %v, want %+v", i, o, ok, want)
		}
		if ctx.Value(span{}) != "span" {
			t.Fatalf("context %d: a wrapping value is lost", i)
		}
		if _, ok := FromContext(WithoutOrigin(ctx)); ok {
			t.Fatalf("context %d: WithoutOrigin does not hide the origin", i)
		}
	}
	c := &cs[0]
	if d, ok := c.Deadline(); ok || !d.IsZero() || c.Done() != nil || c.Err() != nil || c.Value(span{}) != nil {
		t.Fatal("a batch context is not context.Background's twin")
	}
	if _, ok := FromContext(&BatchContexts(origins{}, 1)[0]); ok {
		t.Fatal("an origin without a source")
	}
}

func TestCompareWindow(t *testing.T) {
	t.Parallel()
	cut := Cutoff{FireAt: 9999, Key: "m", Start: 0}
	for _, tc := range []struct {
		fireAt int64
		key    string
		start  int64
		want   int
	}{
		{9998, "z", 5, -1},
		{9999, "a", 0, -1},
		{9999, "m", -10000, -1}, // sliding: an earlier start of the same key and fire time
		{9999, "m", 0, 0},
		{9999, "m", 1, 1},
		{9999, "n", 0, 1},
		{10000, "a", 0, 1},
	} {
		if got := CompareWindow(tc.fireAt, tc.key, tc.start, cut); got != tc.want {
			t.Errorf("CompareWindow(%d, %q, %d) = %d, want %d", tc.fireAt, tc.key, tc.start, got, tc.want)
		}
	}
}

func TestWindowMeta(t *testing.T) {
	t.Parallel()
	cut := Cutoff{FireAt: 59999, Key: `user "7"`, Start: 0}
	m, err := EncodeWindowMeta(cut, 1234)
	if err != nil {
		t.Fatal(err)
	}
	got, readEnd, ok, err := ParseWindowMeta(m)
	if err != nil || !ok || got != cut || readEnd != 1234 {
		t.Fatalf("ParseWindowMeta(%q) = %+v, %d, %v, %v", m, got, readEnd, ok, err)
	}
	// A client's member id, or nothing, is not window state.
	for _, other := range []string{"", "kgo-1b7c-member"} {
		if _, _, ok, err := ParseWindowMeta(other); ok || err != nil {
			t.Fatalf("ParseWindowMeta(%q) = %v, %v; want not window state", other, ok, err)
		}
	}
	if _, _, _, err := ParseWindowMeta(windowMetaPrefix + "{"); err == nil {
		t.Fatal("broken window state read without an error")
	}
	long := make([]byte, MaxWindowMeta)
	for i := range long {
		long[i] = 'k'
	}
	if _, err := EncodeWindowMeta(Cutoff{Key: string(long)}, 0); !errors.Is(err, ErrWindowKeyTooLong) {
		t.Fatalf("a key longer than the metadata limit: %v, want ErrWindowKeyTooLong", err)
	}
}

type emitter struct{ Emitter }

func TestResultContextHidesOrigin(t *testing.T) {
	t.Parallel()
	src := &source{}
	withOrigin := WithOrigin(context.Background(), Origin{Source: src, Topic: "t"})
	res := WithResult(withOrigin, Result{Emitter: &emitter{}, Seq: 3})
	if _, ok := FromContext(res); ok {
		t.Fatal("a result context shows the origin of the record it was made from")
	}
	if r, ok := ResultFromContext(res); !ok || r.Seq != 3 {
		t.Fatalf("ResultFromContext = %+v, %v", r, ok)
	}
	if _, ok := ResultFromContext(withOrigin); ok {
		t.Fatal("a record's context carries a result")
	}
	if _, ok := FromContext(WithoutOrigin(withOrigin)); ok {
		t.Fatal("WithoutOrigin shows the origin")
	}
	if _, ok := FromContext(withOrigin); !ok {
		t.Fatal("the origin is lost")
	}
}
