package txnoffsets

import (
	"context"
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
