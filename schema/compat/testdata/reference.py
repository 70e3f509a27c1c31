"""Apache Avro's own schema compatibility checker (the `avro` package on PyPI,
avro.compatibility.ReaderWriterCompatibilityChecker) over pairs of schemas.

stdin: JSON lines {"reader": <schema>, "writer": <schema>}
stdout: JSON lines {"compatible": bool, "messages": [...], "locations": [...]}
"""
import json
import sys

import avro.schema
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

checker = ReaderWriterCompatibilityChecker()
for line in sys.stdin:
    pair = json.loads(line)
    reader = avro.schema.parse(json.dumps(pair["reader"]))
    writer = avro.schema.parse(json.dumps(pair["writer"]))
    res = checker.get_compatibility(reader, writer)
    print(json.dumps({
        "compatible": res.compatibility == SchemaCompatibilityType.compatible,
        "messages": sorted(str(m) for m in res.messages),
        "locations": sorted(res.locations),
    }))
