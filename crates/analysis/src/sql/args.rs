//! The args grove keeps typed on events (GPU rows: `grid`, `block`, `registers per
//! thread`, `memory bandwidth (GB/s)`, ...) as columns `args.KEY` of `events` and
//! `kernels`, each typed by its values: `i64` when every value is an integer, `f64`
//! when they are numbers, `bool`, else `str` (a string, or an array or object as its
//! compact JSON). Null where the event has no such arg.

use std::collections::BTreeSet;

use polars::prelude::*;

use crate::model::args::ArgValue;
use crate::model::EventTable;

/// Column names of args start with this (`"args.grid"` in a query).
pub const PREFIX: &str = "args.";

/// Every arg key of the rows, in byte order.
pub fn keys(ev: &EventTable, rows: impl Iterator<Item = usize>) -> impl Iterator<Item = String> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut last_list = u32::MAX;
    for i in rows {
        let list = ev.args[i];
        if list == crate::model::events::NONE_U32 || list == last_list {
            continue;
        }
        last_list = list;
        if let Some(a) = ev.args_of(i) {
            for (k, _) in a.iter() {
                seen.insert(k);
            }
        }
    }
    seen.into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>()
        .into_iter()
}

enum Ty {
    Int,
    Float,
    Bool,
    Text,
}

/// The column of arg `key` over the rows.
pub fn column(
    ev: &EventTable,
    rows: impl Iterator<Item = usize>,
    key: &str,
    name: &str,
) -> PolarsResult<Column> {
    let vals: Vec<Option<ArgValue>> = rows
        .map(|i| ev.args_of(i).and_then(|a| a.get(key)))
        .map(|v| v.filter(|v| *v != ArgValue::Null))
        .collect();
    let mut ty: Option<Ty> = None;
    for v in vals.iter().flatten() {
        let t = match v {
            ArgValue::Int(_) => Ty::Int,
            ArgValue::UInt(_) | ArgValue::Float(_) => Ty::Float,
            ArgValue::Bool(_) => Ty::Bool,
            _ => Ty::Text,
        };
        ty = Some(match (ty, t) {
            (None, t) => t,
            (Some(Ty::Int), Ty::Int) => Ty::Int,
            (Some(Ty::Int | Ty::Float), Ty::Int | Ty::Float) => Ty::Float,
            (Some(Ty::Bool), Ty::Bool) => Ty::Bool,
            _ => Ty::Text,
        });
        if matches!(ty, Some(Ty::Text)) {
            break;
        }
    }
    let name: PlSmallStr = name.into();
    let col = match ty {
        // A key its rows give only as null.
        None => Column::full_null(name, vals.len(), &DataType::String),
        Some(Ty::Int) => {
            let ca: Int64Chunked = vals.iter().map(|v| v.and_then(|v| v.as_i64())).collect();
            ca.with_name(name).into_column()
        }
        Some(Ty::Float) => {
            let ca: Float64Chunked = vals.iter().map(|v| v.and_then(|v| v.as_f64())).collect();
            ca.with_name(name).into_column()
        }
        Some(Ty::Bool) => {
            let ca: BooleanChunked = vals
                .iter()
                .map(|v| match v {
                    Some(ArgValue::Bool(b)) => Some(*b),
                    _ => None,
                })
                .collect();
            ca.with_name(name).into_column()
        }
        Some(Ty::Text) => {
            let ca: StringChunked = vals
                .iter()
                .map(|v| v.map(|v| ev.arg_store.text(v).into_owned()))
                .collect();
            ca.with_name(name).into_column()
        }
    };
    Ok(col)
}
