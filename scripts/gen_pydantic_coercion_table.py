#!/usr/bin/env python3
"""Writes crates/tb-sandbox/tests/data/pydantic_coercion.json: how pydantic 2 validates
hostile and edge-case JSON values into the field kinds our state engine coerces (decimal,
date, datetime, int, float, bool, str), in lax mode on JSON-loaded Python objects, as the
reference's tools validate their arguments. Each row: kind, input, and either the
`model_dump(mode="json")` value ("ok") or pydantic's first error message ("err").

Run it in a venv with the pydantic the reference pins
(tb-bench-v1/reference-python-requirements.txt: pydantic 2.14.4, pydantic_core 2.50.5):

    python3 -m venv target/pyvenv
    target/pyvenv/bin/pip install pydantic==2.14.4 pydantic_core==2.50.5
    target/pyvenv/bin/python scripts/gen_pydantic_coercion_table.py
"""

import datetime
import decimal
import json
import math
import pathlib

import pydantic
import pydantic_core

KINDS = {
    "decimal": decimal.Decimal,
    "date": datetime.date,
    "datetime": datetime.datetime,
    "int": int,
    "float": float,
    "bool": bool,
    "str": str,
}

MODELS = {k: pydantic.create_model(f"M_{k}", v=(t, ...)) for k, t in KINDS.items()}

NUMBERS = [
    "0", "1", "-1", "+1", "007", "1.5", "-0.50", ".5", "5.", "1e3", "1E+3", "1e-7",
    "0.0000001", "200000.00", "1_000", "1__000", "_1000", "1000_", "1_000.5", "1.0_5",
    " 12 ", "\t12\n", "\u00a012", "12\u3000", "1 2", "1,5", "1,000", "\u0661\u0662\u0663",
    "\uff11\uff12", "\u0967", "\u22125", "\u2212" + "1.5", "--1", "+-1", "1e", "e3", ".", "",
    " ", "-", "+", "0x10", "0b1", "0o7", "1j", "inf", "-inf", "Infinity", "nan", "NaN",
    "sNaN", "-nan", "1e999999999999999999", "1e-999999999999999999",
    "1e9223372036854775807", "1e-9223372036854775808", "1e-9223372036854775809",
    "1e9223372036854775808", "1E+18446744073709551616", "9" * 30, "-" + "9" * 30,
    "0." + "0" * 40 + "1", "1.000", "1.00000000", "12345678901234567890",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1.0", "1.00",
    "-0", "-0.0", "1e0", "1.5e1", "3.0e0", "2.5e-1", "0e10", "0E-5", "00.100",
    "12abc", "abc", "true", "false", "yes", "no", "on", "off", "t", "f", "y", "n", "TRUE",
    " true ", "True", "1.0e", "١٫٥",
]

DATES = [
    "2025-10-01", "2025-1-01", "2025-10-1", "25-10-01", "2025/10/01", "20251001",
    "2025-02-29", "2024-02-29", "2025-13-01", "2025-00-10", "2025-10-00", "2025-10-32",
    "0000-01-01", "0001-01-01", "9999-12-31", " 2025-10-01", "2025-10-01 ", "2025-10-01\n",
    "2025-10-01T00:00:00", "2025-10-01T00:00:00Z", "2025-10-01T00:00:00+05:00",
    "2025-10-01T00:00:00.000", "2025-10-01T00:00:00.0000001", "2025-10-01T13:00:05",
    "2025-10-01T13:00:05Z", "2025-10-01 13:00:05", "2025-10-01t13:00:05z",
    "2025-10-01T13:00", "2025-10-01T13", "2025-10-01T", "2025-10-01T13:00:05.123456",
    "2025-10-01T13:00:05.1234567", "2025-10-01T13:00:05.123456789012", "2025-10-01T13:00:05,5",
    "2025-10-01T13:00:05+05", "2025-10-01T13:00:05+0530", "2025-10-01T13:00:05+05:30",
    "2025-10-01T13:00:05-05:30", "2025-10-01T13:00:05\u221205:00", "2025-10-01T13:00:05+24:00",
    "2025-10-01T13:00:05+23:59", "2025-10-01T13:00:05+05:60", "2025-10-01T13:00:05 +05:00",
    "2025-10-01T13:00:05Z ", "2025-10-01T13:00:05ZZ", "2025-10-01T24:00:00",
    "2025-10-01T23:59:60", "2025-10-01T23:60:00", "2025-10-01T1:00:00", "2025-10-01T13:0:00",
    "2025-10-01T13:00:5", "2025-10-01T13:00:05.", "2025-10-01T13:00:05.Z",
    "2025-10-01T13:00:05.5Z", "2025-10-01T13:00:05.000000Z", "2025-10-01T00:00:00.000000+00:00",
    "2025-10-01T00:00:00-00:00", "2025-10-01T13:00:05+00:00", "2025-10-01T13:00:05.1+01:00",
    "2025-10-01T13:00:05.1234567+01:00", "\u0662025-10-01", "2025-\u0661\u0660-01",
    "２０２５-10-01", "2025-10-01T13:00:05\u00e9", "é2025-10-01", "2025-10-01é",
    "2025-10-01T13:00:05+05:00é", "2025-10-01T\u00e913:00", "2025-10-é1", "2025-1é-01",
    "202é-10-01", "2025-10-01T13:é0:00", "2025-10-01T13:00:05.12é", "2025-10-01T13:00:05+é5:00",
    "日本語テキスト", "2025年10月01日", "", " ", "T", "Z", "now", "today", "2025",
    "2025-10", "1700000000", "1700000000.5", "1759276800", "1759276800000", "-1", "0", "1",
    "86400", "1e10", "99999999999999999999", "2025-10-01T13:00:05+01:00:30",
    "2025-10-01T13:00:05.123+0100", "2025-10-01 13:00:05.123 +01:00", "+2025-10-01",
    "-2025-10-01", "2025-10-01T13:00:05+05:00:00", "2025-W40-3", "2025-274",
    "1000000", "2025-10-01T00:00", "2025-10-01 00:00:00.000000", "2025-10-01T00:00:00.0000009",
]

EXTRA = [
    None, True, False, 0, 1, -1, 2, 1.0, 1.5, -0.0, 435, 457.5, 0.1, 1e20, 1e-7, 2 ** 53,
    2 ** 63 - 1, -(2 ** 63), 1700000000, 1700000000.5, 1759276800, 1759276800000, 86400,
    1e16, [], {}, ["2025-10-01"], {"v": 1},
]

WORDS = ["hello", "", " x ", "é", "日本", "null", "None", "\u0000", "a" * 200]


def first_error(exc):
    errs = exc.errors()
    return errs[0]["msg"] if errs else str(exc)


def main():
    rows = []
    inputs = NUMBERS + DATES + WORDS + EXTRA
    seen = set()
    for kind, model in MODELS.items():
        for raw in inputs:
            key = (kind, json.dumps(raw, sort_keys=True))
            if key in seen:
                continue
            seen.add(key)
            # What the reference gets: a JSON-loaded Python object.
            value = json.loads(json.dumps(raw))
            try:
                out = model.model_validate({"v": value}).model_dump(mode="json")["v"]
                row = {"kind": kind, "input": value, "ok": out}
            except pydantic.ValidationError as e:
                row = {"kind": kind, "input": value, "err": first_error(e)}
            # JSON cannot carry inf/nan: record them as the error our engine gives.
            if isinstance(row.get("ok"), float) and not math.isfinite(row["ok"]):
                row = {"kind": kind, "input": value, "ok_non_finite": True}
            rows.append(row)
    out = {
        "generator": "scripts/gen_pydantic_coercion_table.py",
        "pydantic": pydantic.VERSION,
        "pydantic_core": pydantic_core.__version__,
        "rows": rows,
    }
    path = pathlib.Path(__file__).resolve().parent.parent / "crates/tb-sandbox/tests/data/pydantic_coercion.json"
    text = json.dumps(out, ensure_ascii=True, indent=0, allow_nan=False)
    path.write_text(text + "\n")
    print(f"{len(rows)} rows -> {path}")


if __name__ == "__main__":
    main()
