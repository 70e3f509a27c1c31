"""Google's protobuf implementation (the `protobuf` package on PyPI) reading
and writing shop.v1.Order with a descriptor set, for the protobuf format's
interop test.

  interop.py DESCRIPTOR_SET decode   stdin: hex messages, one per line; stdout: JSON objects
  interop.py DESCRIPTOR_SET encode   stdin: JSON objects (proto3 JSON mapping); stdout: hex messages
"""
import json
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

with open(sys.argv[1], "rb") as f:
    fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
pool = descriptor_pool.DescriptorPool()
for fd in fds.file:
    pool.Add(fd)
Order = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.v1.Order"))

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    if sys.argv[2] == "decode":
        m = Order.FromString(bytes.fromhex(line))
        print(json.dumps(json_format.MessageToDict(m, preserving_proto_field_name=True), sort_keys=True))
    else:
        m = json_format.Parse(line, Order())
        print(m.SerializeToString(deterministic=True).hex())
