//! The query languages: grove's filter expressions, derive arithmetic and Hatchet's
//! path queries (string and object dialects), all evaluated over the current tree.

pub mod cypher;
pub mod expr;
pub mod lexer;
pub mod limits;
pub mod pattern;

use std::fmt;

use crate::model::{Cct, MetricTable};

/// An error with the byte span of the offending token.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryError {
    pub pos: usize,
    pub len: usize,
    pub msg: String,
}

impl QueryError {
    pub fn new(pos: usize, len: usize, msg: impl Into<String>) -> QueryError {
        QueryError {
            pos,
            len,
            msg: msg.into(),
        }
    }

    /// Shifts the span when the query sits inside a longer command line.
    pub fn offset(mut self, by: usize) -> QueryError {
        self.pos += by;
        self
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.pos + 1, self.msg)
    }
}

/// What queries read: the tree and its metric table.
pub struct Tree<'a> {
    pub cct: &'a Cct,
    pub metrics: &'a MetricTable,
}

impl Tree<'_> {
    /// The 100 % of a metric: the roots' sum of its inclusive column.
    pub fn total(&self, metric: &str) -> f64 {
        let inc = self.metrics.inclusive_of(metric);
        let inc = if crate::model::metrics::base_of_inclusive(metric).is_some() {
            metric.to_string()
        } else {
            inc
        };
        let Some(v) = self.metrics.values(&inc) else {
            return f64::NAN;
        };
        self.cct
            .root_ids()
            .iter()
            .map(|&r| v[r as usize])
            .filter(|x| x.is_finite())
            .sum()
    }

    /// A node attribute as text: name, type, or any frame attribute.
    pub fn attr(&self, n: u32, key: &str) -> Option<&str> {
        self.cct.frame(n).attr(key)
    }

    pub fn has_attr(&self, key: &str) -> bool {
        matches!(key, "name" | "type")
            || (0..self.cct.len() as u32).any(|n| self.cct.frame(n).attr(key).is_some())
    }
}

/// Converts `value unit` to the metric's unit (ns-based times; `s` for seconds).
pub fn convert_unit(value: f64, unit: &str, metric_unit: &str) -> Option<f64> {
    let ns = match unit {
        "ns" => 1.0,
        "us" | "µs" | "μs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        _ => return None,
    };
    let per = match metric_unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        _ => return None,
    };
    Some(value * ns / per)
}
