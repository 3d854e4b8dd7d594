//! Every row of `tests/data/pydantic_coercion.json` (written by
//! `scripts/gen_pydantic_coercion_table.py` from pydantic 2.14.4 / pydantic-core 2.50.5, the
//! versions the reference pins): our lax coercion accepts what pydantic accepts, dumps it as
//! `model_dump(mode="json")` does, and rejects the rest with pydantic's first message.

use serde_json::Value;
use tb_sandbox::coerce::{Ctx, validate};
use tb_sandbox::schema::Kind;

const CTX: Ctx<'static> = Ctx {
    now: "2025-10-01T13:00:05Z",
};

fn kind(name: &str) -> Kind {
    match name {
        "decimal" => Kind::Decimal,
        "date" => Kind::Date,
        "datetime" => Kind::DateTime,
        "int" => Kind::Int,
        "float" => Kind::Float,
        "bool" => Kind::Bool,
        "str" => Kind::Str,
        other => panic!("unknown kind {other}"),
    }
}

/// Where our JSON-valued engine cannot give pydantic's answer, and says so instead:
/// Python integers beyond 64 bits, and infinities or NaN (which JSON cannot carry).
fn known_deviation(row: &Value, got: &Result<Value, String>) -> bool {
    if row.get("ok_non_finite").is_some() {
        return got.as_ref().err().map(String::as_str) == Some("Input should be a finite number");
    }
    let big_int = row["kind"] == "int"
        && row["ok"].as_str().is_none()
        && row["ok"].is_number()
        && row["ok"].as_i64().is_none();
    big_int && got.is_err()
}

#[test]
fn every_row_of_the_pydantic_table() {
    let text = include_str!("../data/pydantic_coercion.json");
    let table: Value = serde_json::from_str(text).expect("table parses");
    assert_eq!(table["pydantic"], "2.14.4");
    let rows = table["rows"].as_array().expect("rows");
    assert!(rows.len() > 1000, "{} rows", rows.len());
    let mut bad = Vec::new();
    let mut deviations = 0;
    for row in rows {
        let k = kind(row["kind"].as_str().unwrap_or_default());
        let got = validate(&k, &row["input"], CTX).map_err(|e| e[0].msg.clone());
        let ok = match (&got, row.get("ok"), row.get("err")) {
            (Ok(v), Some(want), _) => {
                v == want || (v.is_f64() && want.as_f64() == v.as_f64() && want.is_number())
            }
            (Err(e), _, Some(want)) => want.as_str() == Some(e.as_str()),
            _ => false,
        };
        if ok {
            continue;
        }
        if known_deviation(row, &got) {
            deviations += 1;
            continue;
        }
        bad.push(format!(
            "{} {} -> got {:?}, want {}",
            row["kind"],
            row["input"],
            got,
            row.get("ok")
                .map(|v| format!("ok {v}"))
                .or_else(|| row.get("err").map(|v| format!("err {v}")))
                .unwrap_or_else(|| "non-finite".into())
        ));
    }
    eprintln!("{} rows checked, {deviations} known deviations", rows.len());
    assert!(
        deviations < 20,
        "{deviations} known deviations: more than expected"
    );
    assert!(
        bad.is_empty(),
        "{} of {} rows differ:\n{}",
        bad.len(),
        rows.len(),
        bad.join("\n")
    );
}
