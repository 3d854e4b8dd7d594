"""Validates trial-record files with the reference framework's own record model.

Usage: python validate_records.py FILE...   (the framework on PYTHONPATH)

Prints one JSON object: per file, the number of lines its `DecodeResult` accepts and, for
each line it rejects, the line number and pydantic's message.
"""
import json
import sys

from thinkingbox.common.chat_types import DecodeResult

out = {}
for path in sys.argv[1:]:
    valid, invalid = 0, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                DecodeResult.model_validate_json(line)
                valid += 1
            except Exception as e:  # report every rejection, whatever its kind
                invalid.append({"line": n, "error": str(e)[:2000]})
    out[path] = {"valid": valid, "invalid": invalid}
json.dump(out, sys.stdout)
print()
