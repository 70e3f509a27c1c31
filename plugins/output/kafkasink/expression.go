package kafkasink

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Variables of a partition_expression.
const (
	celKey           = "key"
	celValue         = "value"
	celMetadata      = "metadata"
	celTopic         = "topic"
	celNumPartitions = "num_partitions"
)

// partitionExpression is a compiled partition_expression: a CEL program
// over key, value, metadata, topic and num_partitions returning an int. A
// cel.Program is safe for concurrent use.
type partitionExpression struct {
	prog cel.Program
}

// compilePartitionExpression parses and type-checks src, so that syntax and
// type errors are reported at lint and construct time, not per message.
func compilePartitionExpression(src string) (*partitionExpression, error) {
	env, err := cel.NewEnv(
		cel.Variable(celKey, cel.BytesType),
		cel.Variable(celValue, cel.BytesType),
		cel.Variable(celMetadata, cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable(celTopic, cel.StringType),
		cel.Variable(celNumPartitions, cel.IntType),
	)
	if err != nil {
		return nil, fmt.Errorf("field %s: creating the CEL environment: %w", FieldPartitionExpression, err)
	}
	ast, iss := env.Compile(src)
	if iss.Err() != nil {
		return nil, fmt.Errorf("field %s: %w", FieldPartitionExpression, iss.Err())
	}
	if t := ast.OutputType(); !t.IsExactType(cel.IntType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("field %s: must return an int (the partition), returns %s", FieldPartitionExpression, t)
	}
	prog, err := env.Program(ast)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", FieldPartitionExpression, err)
	}
	return &partitionExpression{prog: prog}, nil
}

var errNotInt = errors.New("result is not an int")

// partition evaluates the expression for a record of topic, which has n
// partitions. A result outside [0, n) is a *PartitionError naming it.
func (e *partitionExpression) partition(topic string, r *kgo.Record, meta map[string]string, n int) (int, error) {
	key, value := r.Key, r.Value
	if key == nil {
		key = []byte{}
	}
	if value == nil {
		value = []byte{}
	}
	if meta == nil {
		meta = map[string]string{}
	}
	out, _, err := e.prog.Eval(map[string]any{
		celKey:           key,
		celValue:         value,
		celMetadata:      meta,
		celTopic:         topic,
		celNumPartitions: int64(n),
	})
	if err != nil {
		return -1, &PartitionError{Field: FieldPartitionExpression, Topic: topic, NumPartitions: n, Err: err}
	}
	v, err := out.ConvertToNative(reflect.TypeFor[int64]())
	if err != nil {
		return -1, &PartitionError{Field: FieldPartitionExpression, Topic: topic, NumPartitions: n,
			Err: fmt.Errorf("%w: %v (%s)", errNotInt, out.Value(), out.Type().TypeName())}
	}
	p := v.(int64)
	if p < 0 || p >= int64(n) || p > math.MaxInt32 {
		return -1, &PartitionError{Field: FieldPartitionExpression, Topic: topic, Partition: p, NumPartitions: n}
	}
	return int(p), nil
}

// expressionPartitioner evaluates a partition_expression for each record.
// The record's metadata and the error slot travel in its partitionCheck.
func expressionPartitioner(e *partitionExpression) kgo.Partitioner {
	return kgo.BasicConsistentPartitioner(func(topic string) func(*kgo.Record, int) int {
		return func(r *kgo.Record, n int) int {
			pc := partitionCheckOf(r)
			var meta map[string]string
			if pc != nil {
				meta = pc.meta
			}
			p, err := e.partition(topic, r, meta, n)
			if err != nil {
				if pc != nil {
					var pe *PartitionError
					errors.As(err, &pe)
					pc.err.Store(pe)
				}
				return -1 // the client fails the record
			}
			return p
		}
	})
}
