"""Confluent's Python client (confluent-kafka, librdkafka) against connectd's
avro-confluent format, through a real broker and a real schema registry
(TestRegistryInterop in ../registry_interop_test.go).

  registry_interop.py produce BROKERS URL TOPIC KEY_SCHEMA_FILE VALUE_SCHEMA_FILE
      read one JSON row per line from stdin and produce each to TOPIC with a
      SerializingProducer: the key is the row's fields of the key schema, the
      value its fields of the value schema, each serialized by an
      AvroSerializer with that writer schema (auto-registered under
      TopicNameStrategy's subjects TOPIC-key and TOPIC-value); JSON values
      are turned into the Python values the serializer expects by the
      schema's logical types: a decimal from its string, a timestamp-millis
      from milliseconds since the epoch (UTC); print the count
  registry_interop.py consume BROKERS URL TOPIC COUNT
      read COUNT records of TOPIC from the beginning with a
      DeserializingConsumer and an AvroDeserializer for key and value (writer
      schema from the registry by the id in each), isolation.level
      read_committed, and print each as one JSON line {"key": KEY, "value":
      VALUE}: a Decimal as {"decimal": "<str>"}, a datetime as
      {"timestamp_ms": <int>}, bytes as {"bytes": "<base64>"}

Needs: pip install "confluent-kafka[avro,schemaregistry]" fastavro requests
"""

import base64
import datetime
import decimal
import json
import sys
import time
import uuid

from confluent_kafka import DeserializingConsumer, SerializingProducer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def logical(t):
    """The non-null branch of a field type, as a dict or a string."""
    if isinstance(t, list):
        t = [x for x in t if x != "null"][0]
    return t


def to_python(schema, row):
    out = {}
    for f in schema["fields"]:
        v = row.get(f["name"])
        t = logical(f["type"])
        lt = t.get("logicalType") if isinstance(t, dict) else None
        if v is not None and lt == "decimal":
            v = decimal.Decimal(v)
        elif v is not None and lt == "timestamp-millis":
            v = EPOCH + datetime.timedelta(milliseconds=v)
        out[f["name"]] = v
    return out


def plain(v):
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": base64.b64encode(v).decode()}
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        d = v - EPOCH
        return {"timestamp_ms": (d.days * 86400 + d.seconds) * 1000 + d.microseconds // 1000}
    return v


def produce(brokers, url, topic, key_schema_file, value_schema_file):
    with open(key_schema_file) as fh:
        key_schema_str = fh.read()
    with open(value_schema_file) as fh:
        value_schema_str = fh.read()
    key_schema, value_schema = json.loads(key_schema_str), json.loads(value_schema_str)
    client = SchemaRegistryClient({"url": url})
    producer = SerializingProducer({
        "bootstrap.servers": brokers,
        "enable.idempotence": True,
        "acks": "all",
        "key.serializer": AvroSerializer(client, key_schema_str, conf={"auto.register.schemas": True}),
        "value.serializer": AvroSerializer(client, value_schema_str, conf={"auto.register.schemas": True}),
    })
    errors = []

    def on_delivery(err, _msg):
        if err is not None:
            errors.append(err)

    n = 0
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        row = json.loads(line)
        producer.produce(topic, key=to_python(key_schema, row), value=to_python(value_schema, row), on_delivery=on_delivery)
        n += 1
    left = producer.flush(60)
    if left or errors:
        sys.exit("produce: %d undelivered, errors %s" % (left, errors))
    print(n)


def consume(brokers, url, topic, count):
    client = SchemaRegistryClient({"url": url})
    consumer = DeserializingConsumer({
        "bootstrap.servers": brokers,
        "group.id": "registry-interop-" + uuid.uuid4().hex,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
        "key.deserializer": AvroDeserializer(client),
        "value.deserializer": AvroDeserializer(client),
    })
    consumer.subscribe([topic])
    got = 0
    deadline = time.monotonic() + 60
    try:
        while got < count:
            if time.monotonic() > deadline:
                sys.exit("consume: %d of %d records within 60s" % (got, count))
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                sys.exit("consume: %s" % msg.error())
            print(json.dumps({"key": plain(msg.key()), "value": plain(msg.value())}, sort_keys=True), flush=True)
            got += 1
    finally:
        consumer.close()


def main():
    mode = sys.argv[1]
    if mode == "produce":
        produce(*sys.argv[2:7])
    elif mode == "consume":
        consume(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
