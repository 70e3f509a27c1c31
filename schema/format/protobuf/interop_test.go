package protobuf_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/pythontest"
)

func runPython(t *testing.T, py string, args []string, stdin string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{"testdata/interop.py"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("interop.py %v: %v\n%s", args, err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// Google's protobuf implementation reads what connectd writes and connectd
// reads what it writes: the same values both ways, through a descriptor
// set.
func TestInteropWithGoogleProtobuf(t *testing.T) {
	t.Parallel()
	py := pythontest.Interpreter(t, "google.protobuf.json_format", "protobuf")
	set := writeDescriptorSet(t)
	c := newCodec(t, orderColumns, nil)

	// connectd writes, Google's implementation reads.
	data, err := c.Encode(fullRow())
	if err != nil {
		t.Fatal(err)
	}
	lines := runPython(t, py, []string{set, "decode"}, hex.EncodeToString(data)+"\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	// The proto3 JSON mapping: 64-bit integers as strings, bytes as
	// base64, enums by name, unsigned as unsigned.
	want := map[string]any{
		"id": "7", "customer": "ünïcode", "note": "ring twice", "gift": true, "qty": 3.0, "delta": -5.0,
		"small_unsigned": 4294967295.0, "big_unsigned": "18446744073709551614", "weight": 1.5, "total": 12.25, "blob": "AAEC",
		"status": "SHIPPED", "status_number": "PAID", "first": map[string]any{"sku": "a", "qty": 1.0},
		"items": []any{map[string]any{"sku": "a", "qty": 1.0}, map[string]any{"sku": "b", "qty": 2.0}},
		"tags":  []any{"x", "y"}, "counts": map[string]any{"k": "9"}, "labels": map[string]any{"-3": "minus three"},
		"placed": "2023-11-14T22:13:20.000000005Z", "rating": 0.0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Google's protobuf read:\n got %v\nwant %v", got, want)
	}

	// Google's implementation writes, connectd reads.
	in, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	lines = runPython(t, py, []string{set, "encode"}, string(in)+"\n")
	msg, err := hex.DecodeString(lines[0])
	if err != nil {
		t.Fatal(err)
	}
	row, err := c.Decode(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(row, fullRow()) {
		t.Fatalf("connectd read Google's message:\n got %#v\nwant %#v", row, fullRow())
	}
	if !bytes.Equal(msg, data) {
		t.Errorf("the two implementations' deterministic encodings differ:\n google   %x\n connectd %x", msg, data)
	}
}
