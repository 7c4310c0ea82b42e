//! A query's answer as text, CSV, JSON or Parquet (`grove sql --format`), and one
//! cell as text (the results panel).

use std::io::Write;

use polars::prelude::*;

/// A cell as text: numbers as Rust prints them (no exponent, no rounding), strings
/// as they are, null as the empty string.
pub fn cell_text(v: &AnyValue<'_>) -> String {
    match v {
        AnyValue::Null => String::new(),
        AnyValue::String(s) => s.to_string(),
        AnyValue::StringOwned(s) => s.to_string(),
        AnyValue::Float64(x) => float(*x),
        AnyValue::Float32(x) => float(f64::from(*x)),
        other => other.to_string(),
    }
}

fn float(x: f64) -> String {
    // Rust prints a float without exponent and shortest round trip, as the CSV
    // export of the tree does: the two compare byte for byte.
    format!("{x}")
}

/// Whether a column holds numbers (right-aligned in text, bare in JSON).
pub fn numeric(dtype: &DataType) -> bool {
    dtype.is_primitive_numeric()
}

/// Every cell of the frame as text, row by row.
pub fn rows_text(df: &DataFrame) -> Vec<Vec<String>> {
    let cols = df.columns();
    (0..df.height())
        .map(|r| {
            cols.iter()
                .map(|c| c.get(r).map(|v| cell_text(&v)).unwrap_or_default())
                .collect()
        })
        .collect()
}

fn names(df: &DataFrame) -> Vec<String> {
    df.columns().iter().map(|c| c.name().to_string()).collect()
}

/// An aligned table with a header line (numbers right-aligned).
pub fn text<W: Write>(out: &mut W, df: &DataFrame) -> std::io::Result<()> {
    let head = names(df);
    let rows = rows_text(df);
    let right: Vec<bool> = df.columns().iter().map(|c| numeric(c.dtype())).collect();
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = " ".repeat(width[i].saturating_sub(c.chars().count()));
            let last = i + 1 == cells.len();
            if right[i] {
                s.push_str(&pad);
                s.push_str(c);
            } else {
                s.push_str(c);
                if !last {
                    s.push_str(&pad);
                }
            }
        }
        s
    };
    writeln!(out, "{}", line(&head))?;
    for r in &rows {
        writeln!(out, "{}", line(r))?;
    }
    writeln!(out, "({} rows)", rows.len())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// RFC 4180 CSV with a header line; null is an empty field.
pub fn csv<W: Write>(out: &mut W, df: &DataFrame) -> std::io::Result<()> {
    let head: Vec<String> = names(df).iter().map(|h| csv_field(h)).collect();
    writeln!(out, "{}", head.join(","))?;
    for r in rows_text(df) {
        let r: Vec<String> = r.iter().map(|c| csv_field(c)).collect();
        writeln!(out, "{}", r.join(","))?;
    }
    Ok(())
}

fn json_value(v: &AnyValue<'_>) -> serde_json::Value {
    use serde_json::Value;
    match v {
        AnyValue::Null => Value::Null,
        AnyValue::Boolean(b) => Value::Bool(*b),
        AnyValue::Float64(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
        AnyValue::Float32(x) => {
            serde_json::Number::from_f64(f64::from(*x)).map_or(Value::Null, Value::Number)
        }
        v if v.is_signed_integer() => v.extract::<i64>().map_or(Value::Null, Value::from),
        v if v.is_unsigned_integer() => v.extract::<u64>().map_or(Value::Null, Value::from),
        other => Value::String(cell_text(other)),
    }
}

/// A JSON array of one object per row, keys in column order.
pub fn json<W: Write>(out: &mut W, df: &DataFrame) -> std::io::Result<()> {
    let head: Vec<String> = names(df)
        .iter()
        .map(|h| serde_json::to_string(h).unwrap_or_default())
        .collect();
    let cols = df.columns();
    writeln!(out, "[")?;
    for r in 0..df.height() {
        let fields: Vec<String> = cols
            .iter()
            .zip(&head)
            .map(|(c, h)| {
                let v = c.get(r).map(|v| json_value(&v)).unwrap_or_default();
                format!("{h}: {v}")
            })
            .collect();
        let comma = if r + 1 < df.height() { "," } else { "" };
        writeln!(out, "  {{{}}}{comma}", fields.join(", "))?;
    }
    writeln!(out, "]")
}

/// The answer as a Parquet file.
pub fn parquet<W: Write>(out: &mut W, df: &DataFrame) -> Result<(), String> {
    let mut df = df.clone();
    let mut buf = Vec::new();
    ParquetWriter::new(&mut buf)
        .finish(&mut df)
        .map_err(|e| e.to_string())?;
    out.write_all(&buf).map_err(|e| e.to_string())
}
