package devbroker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseAddr(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		port    int
		wantErr bool
	}{
		{in: "19092", port: 19092},
		{in: ":19092", port: 19092},
		{in: "127.0.0.1:9092", port: 9092},
		{in: "localhost:0", port: 0},
		{in: "0.0.0.0:9092", wantErr: true},
		{in: "10.0.0.1:9092", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "127.0.0.1:99999", wantErr: true},
	}
	for _, c := range cases {
		port, err := ParseAddr(c.in)
		if (err != nil) != c.wantErr {
			t.Fatalf("ParseAddr(%q) error = %v, want error %v", c.in, err, c.wantErr)
		}
		if err == nil && port != c.port {
			t.Fatalf("ParseAddr(%q) = %d, want %d", c.in, port, c.port)
		}
	}
}

func TestBrokerRoundTrip(t *testing.T) {
	t.Parallel()
	b, err := Start(Config{Port: 0, Partitions: 3, Topics: []string{"seeded"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ConsumeTopics("demo"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "demo", Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx, "seeded")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := topics["seeded"]; !ok || d.Err != nil || len(d.Partitions) != 3 {
		t.Fatalf("seeded topic not created with 3 partitions: %+v", topics)
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) != 1 || string(recs[0].Value) != "hello" {
		t.Fatalf("got %v, want one record 'hello'", recs)
	}
	if recs[0].Partition < 0 || recs[0].Partition > 2 {
		t.Fatalf("partition %d outside the 3 auto-created partitions", recs[0].Partition)
	}
}
