"""Interop check for connectd's avro-confluent format with Confluent's
Python client (confluent-kafka), a client that connectd did not write.

  interop.py URL produce TOPIC   print one hex record per line, serialized by
                                 AvroSerializer with WRITER_SCHEMA
  interop.py URL consume TOPIC   read hex records (one a line) from stdin,
                                 deserialize them with AvroDeserializer (the
                                 writer schema from the registry) and print
                                 each as one JSON line

The Go test (interop_test.go) runs it against its in-process fake registry.
Needs: pip install "confluent-kafka[avro,schemaregistry]" fastavro requests
"""

import base64
import datetime
import decimal
import json
import sys

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

# A schema as a Python producer writes it: its own names, namespace and
# field order, a nested record, logical types.
WRITER_SCHEMA = json.dumps({
    "type": "record", "name": "Reading", "namespace": "com.example.py",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "ok", "type": "boolean"},
        {"name": "count", "type": "int"},
        {"name": "total", "type": "long"},
        {"name": "ratio", "type": "float"},
        {"name": "value", "type": "double"},
        {"name": "price", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}], "default": None},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": None},
        {"name": "raw", "type": "bytes"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
        {"name": "loc", "type": ["null", {"type": "record", "name": "Loc", "fields": [
            {"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}]}], "default": None},
    ],
})

RECORDS = [
    {
        "sensor": "s-1", "ok": True, "count": -7, "total": 9007199254740993, "ratio": 0.5, "value": -1.25,
        "price": decimal.Decimal("12.34"), "day": datetime.date(2026, 12, 2),
        "at": datetime.time(23, 59, 58, 120000),
        "ts": datetime.datetime(2026, 12, 2, 12, 13, 14, 123000, tzinfo=datetime.timezone.utc),
        "raw": b"\x00\x01\xff", "tags": ["a", "b"], "attrs": {"floor": 3, "none": None},
        "loc": {"lat": 52.5, "lon": 13.25},
    },
    {
        "sensor": "", "ok": False, "count": 0, "total": 0, "ratio": 0.0, "value": 0.0,
        "price": None, "day": datetime.date(1969, 12, 31), "at": datetime.time(0, 0, 0),
        "ts": None, "raw": b"", "tags": [], "attrs": {}, "loc": None,
    },
]


def plain(v):
    """A JSON value for v, in the forms the Go test compares."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": base64.b64encode(v).decode()}
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, datetime.datetime):
        return {"timestamp_ms": int(v.timestamp() * 1000) if v.tzinfo else int(v.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)}
    if isinstance(v, datetime.date):
        return {"date": v.isoformat()}
    if isinstance(v, datetime.time):
        return {"time_ms": ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000}
    return v


def main():
    url, mode, topic = sys.argv[1], sys.argv[2], sys.argv[3]
    client = SchemaRegistryClient({"url": url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    if mode == "produce":
        ser = AvroSerializer(client, WRITER_SCHEMA, conf={"auto.register.schemas": True})
        for rec in RECORDS:
            print(ser(rec, ctx).hex())
    elif mode == "consume":
        de = AvroDeserializer(client)
        for line in sys.stdin:
            line = line.strip()
            if line:
                print(json.dumps(plain(de(bytes.fromhex(line), ctx)), sort_keys=True))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
