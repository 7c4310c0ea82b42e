//! Small helpers: Kineto's time format, the PRNG, sizes and "Input Dims" shapes.

use std::fmt::{self, Write as _};

use crate::catalogue::*;

// ---------------------------------------------------------------------------
// Small helpers.
// ---------------------------------------------------------------------------

/// Kineto's time format: integer nanoseconds printed as microseconds with a
/// three-digit fraction. Formatting from integers keeps the text exact.
pub(crate) struct Us(pub(crate) u64);

impl fmt::Display for Us {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

/// splitmix64: tiny, fast and good enough; determinism is what matters.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64) < p * (1u64 << 53) as f64
    }
    /// `base` ± `pct` percent, with rare slow outliers (throttling, contention).
    pub(crate) fn jitter(&mut self, base: u64, pct: u64) -> u64 {
        let spread = base * pct / 100;
        let mut v = base - spread + self.below(2 * spread + 1);
        if self.chance(0.015) {
            v = v * self.range(120, 160) / 100;
        }
        v.max(1)
    }
}

pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("bad size {s:?}"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        _ => return Err(format!("bad size unit in {s:?}")),
    };
    Ok(n * mult)
}

/// Row-major strides of a contiguous tensor.
pub(crate) fn strides(dims: &[u64]) -> Vec<u64> {
    let mut out = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1] * dims[i + 1];
    }
    out
}

pub(crate) fn json_list<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let mut s = String::from("[");
    for (i, it) in items.into_iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{it}");
    }
    s.push(']');
    s
}

/// Value of one dimension in a shape spec: a number or a model-size letter,
/// optionally multiplied (`B*N`).
pub(crate) fn dim_value(d: &str) -> u64 {
    d.split('*')
        .map(|f| match f {
            "B" => BATCH,
            "S" => SEQ,
            "T" => TOKENS,
            "H" => HIDDEN,
            "F" => FFN,
            "N" => HEADS,
            "D" => HEAD_DIM,
            "V" => VOCAB,
            n => n.parse().unwrap_or_else(|_| panic!("bad dimension {d:?}")),
        })
        .product()
}

/// The record_shapes args PyTorch attaches to an op, from a compact spec so
/// call sites stay one line: space-separated inputs, each either a tensor
/// `t[d0,d1,...]` (t: `h` c10::Half, `f` float, `l` long int; see
/// `dim_value` for dims), `Scalar` (its concrete value is recorded),
/// `ScalarList`, `TensorList`, or `-` for None.
pub(crate) fn shapes(spec: &str) -> String {
    let (mut concrete, mut types, mut strides_l, mut dims_l) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for tok in spec.split_whitespace() {
        let (ty, dims): (&str, Vec<u64>) = match tok.split_once('[') {
            Some((t, rest)) => {
                let ty = match t {
                    "h" => "c10::Half",
                    "f" => "float",
                    "l" => "long int",
                    _ => panic!("bad tensor type in shape spec {spec:?}"),
                };
                let dims = rest
                    .trim_end_matches(']')
                    .split(',')
                    .filter(|d| !d.is_empty())
                    .map(dim_value)
                    .collect();
                (ty, dims)
            }
            None if tok == "-" => ("", Vec::new()),
            None => (tok, Vec::new()),
        };
        concrete.push(if ty == "Scalar" { "\"1\"" } else { "\"\"" });
        types.push(format!("\"{ty}\""));
        strides_l.push(json_list(strides(&dims)));
        dims_l.push(json_list(dims));
    }
    format!(
        ", \"Concrete Inputs\": {}, \"Input type\": {}, \"Input Strides\": {}, \"Input Dims\": {}",
        json_list(concrete),
        json_list(types),
        json_list(strides_l),
        json_list(dims_l)
    )
}
