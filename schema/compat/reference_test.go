package compat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/pythontest"
)

// Apache Avro's own compatibility checker (its Python library) is the
// referee: over schema pairs like the ones Flink's tables give (records of
// nullable unions, nested rows, arrays, maps, enums, promotions, aliases,
// renamed records), Check's verdict in each direction equals Avro's.
func TestCheckAgreesWithApacheAvro(t *testing.T) {
	t.Parallel()
	py := pythontest.Interpreter(t, "avro.compatibility", "avro")
	schemas := []string{
		rec(aInt),
		rec(aLong),
		rec(aString),
		rec(aInt, bOptional),
		rec(aInt, bRequired),
		rec(aInt, cNested),
		rec(aInt, cNestedX),
		rec(dArray),
		rec(dArrayStr),
		rec(`{"name":"a","type":"float"}`),
		rec(`{"name":"a","type":"double"}`),
		rec(`{"name":"a","type":"bytes"}`),
		rec(`{"name":"e","type":{"type":"enum","name":"color","symbols":["RED","GREEN"]}}`),
		rec(`{"name":"e","type":{"type":"enum","name":"color","symbols":["RED","GREEN","BLUE"]}}`),
		rec(`{"name":"m","type":{"type":"map","values":"int"}}`),
		rec(`{"name":"m","type":{"type":"map","values":"long"}}`),
		rec(`{"name":"z","type":"int","aliases":["a"]}`),
		rec(`{"name":"a","type":["null","int"],"default":null}`),
		rec(`{"name":"a","type":["null","long"],"default":null}`),
		`{"type":"record","name":"other","fields":[{"name":"a","type":"int"}]}`,
		`{"type":"record","name":"record","namespace":"org.apache.flink.avro.generated","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"],"default":null}]}`,
		`{"type":"record","name":"record","namespace":"org.apache.flink.avro.generated","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"],"default":null},{"name":"qty","type":"int"}]}`,
		`{"type":"record","name":"record","namespace":"org.apache.flink.avro.generated","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"],"default":null},{"name":"note","type":["null","string"],"default":null}]}`,
	}
	type pair struct {
		Reader json.RawMessage `json:"reader"`
		Writer json.RawMessage `json:"writer"`
	}
	var (
		pairs []pair
		in    bytes.Buffer
	)
	for _, r := range schemas {
		for _, w := range schemas {
			p := pair{json.RawMessage(r), json.RawMessage(w)}
			pairs = append(pairs, p)
			b, _ := json.Marshal(p)
			in.Write(append(b, '\n'))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "testdata/reference.py")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference.py: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	i, disagree := 0, 0
	for sc.Scan() {
		var avro struct {
			Compatible bool     `json:"compatible"`
			Messages   []string `json:"messages"`
			Locations  []string `json:"locations"`
		}
		if err := json.Unmarshal(sc.Bytes(), &avro); err != nil {
			t.Fatal(err)
		}
		p := pairs[i]
		i++
		// BACKWARD with the reader as the new schema and the writer as
		// the one registered: Check's verdict is the reader's.
		err := Check(Backward, string(p.Reader), []string{string(p.Writer)})
		if (err == nil) != avro.Compatible {
			disagree++
			t.Errorf("reader %s\nwriter %s\nApache Avro: compatible %v %v %v\nconnectd: %v", p.Reader, p.Writer, avro.Compatible, avro.Messages, avro.Locations, err)
		}
	}
	if i != len(pairs) {
		t.Fatalf("Apache Avro answered %d pairs of %d", i, len(pairs))
	}
	t.Logf("%d pairs, %d disagreements", len(pairs), disagree)
}
