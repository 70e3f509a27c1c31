package registry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/schema/registry"
	"github.com/connectd/connectd/schema/registry/registrytest"
)

func TestNew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  registry.Config
		want string
	}{
		{registry.Config{}, "no URL"},
		{registry.Config{URL: "localhost:8081"}, "want http:// or https://"},
		{registry.Config{URL: "http://h", UserInfo: "nocolon"}, "want user:password"},
	} {
		if _, err := registry.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: want %q, got %v", tc.cfg, tc.want, err)
		}
	}
	c, err := registry.New(registry.Config{URL: "https://bob:pw@registry.example:8081/base/"})
	if err != nil {
		t.Fatal(err)
	}
	if c.URL() != "https://registry.example:8081/base" {
		t.Errorf("URL without credentials: %s", c.URL())
	}
}

func TestClient(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	reg.RequireAuth("bob:pw")
	c, err := registry.New(registry.Config{URL: reg.URL(), UserInfo: "bob:pw"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const s = `{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}`
	if _, err := c.Lookup(ctx, "a-value", s); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("lookup before register: %v", err)
	}
	id, err := c.Register(ctx, "a-value", s)
	if err != nil {
		t.Fatal(err)
	}
	if id2, err := c.Register(ctx, "a-value", s); err != nil || id2 != id {
		t.Fatalf("second register: %d %v", id2, err)
	}
	got, err := c.SchemaByID(ctx, id)
	if err != nil || got.Schema != s {
		t.Fatalf("by id: %+v %v", got, err)
	}
	if reg.TotalRequests() != 2 {
		t.Errorf("the second register and the fetch by id are cached: %d requests", reg.TotalRequests())
	}
	if ct := reg.PostContentTypes(); len(ct) != 1 || ct[registry.ContentType] != 2 {
		t.Errorf("POST content types: %v, want only %s", ct, registry.ContentType)
	}
	if _, err := c.Register(ctx, "b-value", "not json"); !errors.Is(err, registry.ErrInvalid) || !strings.Contains(err.Error(), "error_code 42201") {
		t.Fatalf("invalid schema: %v", err)
	}
}

func TestRetryStopsWithContext(t *testing.T) {
	t.Parallel()
	reg := registrytest.New()
	defer reg.Close()
	reg.Fail5xx(1000)
	c, err := registry.New(registry.Config{URL: reg.URL(), Retries: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.SchemaByID(ctx, 1)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("want the deadline and the last error, got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("retries ignored the context: %s", time.Since(start))
	}
	reg.Close()
	c2, _ := registry.New(registry.Config{URL: reg.URL(), Retries: -1})
	if _, err := c2.SchemaByID(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "schema registry GET "+reg.URL()+"/schemas/ids/1") {
		t.Fatalf("closed server: %v", err)
	}
}
