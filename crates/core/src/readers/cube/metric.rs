//! One metric's values on the call tree: the stored rows placed on their cnodes, both
//! the exclusive and the inclusive value of every (cnode, location), and the figures
//! grove shows, per location and summed over locations.
//!
//! Cube semantics followed here (cubelib's value classes, as pycubexr reproduces them):
//! - A cnode the metric's index does not list holds 0 at every location.
//! - Exclusive metrics: inclusive = the value aggregated over the subtree.
//!   Inclusive metrics: exclusive = own value minus the children's inclusive values;
//!   for unsigned integers a child larger than what is left is clamped (no negative
//!   or wrapped-around exclusive count); doubles may go negative, and stay so, as Cube
//!   shows them. Simple metrics: one value, both exclusive and inclusive.
//! - MINDOUBLE/MAXDOUBLE aggregate by min/max over a subtree (a child whose row is 0 at
//!   every location has no value and is left out, as pycubexr does) and over
//!   locations; subtracting children leaves them unchanged. A cnode without a row has
//!   no value (NaN) rather than 0 (pycubexr fails on such sparse rows).
//! - NaN stays NaN (grove shows it as no value); the reader counts them in a warning.

use super::anchor::{Anchor, Kind, Metric};
use super::values::{self, Agg, Layout, Shape};

/// A metric read: one plane per value field, `cnodes × locations`, cnode-major.
pub struct Planes {
    pub layout: Layout,
    pub excl: Vec<Vec<f64>>,
    pub incl: Vec<Vec<f64>>,
    pub nan: usize,
    pub huge: usize,
    pub notes: Vec<String>,
}

fn combine(a: Agg, x: f64, y: f64) -> f64 {
    match a {
        Agg::Sum => x + y,
        Agg::Min => x.min(y),
        Agg::Max => x.max(y),
    }
}

/// Reads a metric's index and data into planes of stored values on the cnodes.
pub fn read(
    a: &Anchor,
    m: &Metric,
    kind: Kind,
    index: &[u8],
    data: &[u8],
) -> Result<Planes, String> {
    let layout = values::layout(&m.dtype)?;
    let (rec, offs) = values::offsets(&layout);
    let idx = values::parse_index(index)?;
    let order = super::anchor::enumeration(a, kind);
    let (ncn, nloc) = (a.cnodes.len(), a.locations.len());
    let rows: Vec<i64> = idx.rows.unwrap_or_else(|| (0..ncn as i64).collect());
    let want = rows.len().saturating_mul(nloc).saturating_mul(rec);
    let raw = values::raw_data(data, idx.big_endian, want)?;
    let mut notes = Vec::new();
    if raw.len() < want {
        return Err(format!(
            "the data holds {} bytes, {} rows of {nloc} locations need {want}",
            raw.len(),
            rows.len()
        ));
    }
    let mut stored: Vec<Vec<f64>> = Vec::new();
    let (mut nan, mut huge) = (0, 0);
    for ((f, agg), off) in layout.fields.iter().zip(&offs) {
        let (v, h) = values::decode(&raw, rec, *off, *f, idx.big_endian);
        huge += h;
        nan += v.iter().filter(|x| x.is_nan()).count();
        // A call path without a row has no minimum or maximum (NaN, which min and max
        // pass over), where a sum has 0.
        let absent = if *agg == Agg::Sum { 0.0 } else { f64::NAN };
        let mut plane = vec![absent; ncn * nloc];
        for (r, &pos) in rows.iter().enumerate() {
            let Some(&cn) = usize::try_from(pos).ok().and_then(|p| order.get(p)) else {
                continue;
            };
            plane[cn * nloc..(cn + 1) * nloc].copy_from_slice(&v[r * nloc..(r + 1) * nloc]);
        }
        stored.push(plane);
    }
    if layout.shape == Shape::TauAtomic {
        // Where nothing was counted the minimum and maximum are no value either.
        let (count, rest) = stored.split_at_mut(1);
        for (k, &n) in count[0].iter().enumerate() {
            if n == 0.0 {
                rest[0][k] = f64::NAN;
                rest[1][k] = f64::NAN;
            }
        }
    }
    let bad_rows = rows
        .iter()
        .filter(|&&p| usize::try_from(p).ok().is_none_or(|p| p >= order.len()))
        .count();
    if bad_rows > 0 {
        notes.push(format!(
            "{bad_rows} row(s) name a call path the anchor does not have and are skipped"
        ));
    }
    let mut p = from_stored(a, kind, layout, stored);
    p.nan = nan;
    p.huge = huge;
    p.notes = notes;
    Ok(p)
}

/// A metric from its stored planes (`cnodes × locations`, cnode-major).
pub fn from_stored(a: &Anchor, kind: Kind, layout: Layout, stored: Vec<Vec<f64>>) -> Planes {
    let (excl, incl) = both(a, kind, &layout, stored);
    Planes {
        layout,
        excl,
        incl,
        nan: 0,
        huge: 0,
        notes: Vec::new(),
    }
}

/// The exclusive and the inclusive planes from the stored ones.
fn both(
    a: &Anchor,
    kind: Kind,
    l: &Layout,
    stored: Vec<Vec<f64>>,
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let nloc = a.locations.len();
    let mut excl = Vec::new();
    let mut incl = Vec::new();
    for (plane, &(_, agg)) in stored.into_iter().zip(&l.fields) {
        match kind {
            Kind::Simple => {
                incl.push(plane.clone());
                excl.push(plane);
            }
            Kind::Exclusive => {
                let mut up = plane.clone();
                // Children follow their parent in `cnodes`: walking backwards, a node's
                // subtree is complete when it is added to its parent.
                for c in (0..a.cnodes.len()).rev() {
                    let Some(p) = a.cnodes[c].parent else {
                        continue;
                    };
                    let row = &up[c * nloc..(c + 1) * nloc];
                    if agg != Agg::Sum && row.iter().all(|&x| x == 0.0) {
                        continue;
                    }
                    let row = row.to_vec();
                    for (k, x) in row.into_iter().enumerate() {
                        let t = &mut up[p * nloc + k];
                        *t = combine(agg, *t, x);
                    }
                }
                excl.push(plane);
                incl.push(up);
            }
            Kind::Inclusive => {
                let mut own = plane.clone();
                if agg == Agg::Sum {
                    for c in 0..a.cnodes.len() {
                        let Some(p) = a.cnodes[c].parent else {
                            continue;
                        };
                        for k in 0..nloc {
                            let child = plane[c * nloc + k];
                            let t = &mut own[p * nloc + k];
                            *t -= if l.unsigned { child.min(*t) } else { child };
                        }
                    }
                }
                excl.push(own);
                incl.push(plane);
            }
        }
    }
    (excl, incl)
}

/// One plane's values at location `loc` (None: aggregated over all locations).
fn pick(plane: &[f64], agg: Agg, nloc: usize, loc: Option<usize>) -> Vec<f64> {
    let ncn = plane.len() / nloc.max(1);
    (0..ncn)
        .map(|c| {
            let row = &plane[c * nloc..(c + 1) * nloc];
            match loc {
                Some(k) => row[k],
                None => row
                    .iter()
                    .copied()
                    .reduce(|x, y| combine(agg, x, y))
                    .unwrap_or(0.0),
            }
        })
        .collect()
}

/// The columns of one metric for one location (or the summary): (name suffix, values)
/// pairs, exclusive first then inclusive, the main figure first.
pub fn columns(p: &Planes, nloc: usize, loc: Option<usize>) -> Vec<(String, Vec<f64>, Vec<f64>)> {
    let get = |planes: &[Vec<f64>], i: usize| pick(&planes[i], p.layout.fields[i].1, nloc, loc);
    let ratio = |x: Vec<f64>, y: Vec<f64>| -> Vec<f64> {
        x.iter()
            .zip(&y)
            .map(|(a, b)| if *b == 0.0 { f64::NAN } else { a / b })
            .collect()
    };
    match p.layout.shape {
        Shape::Scalar => vec![(String::new(), get(&p.excl, 0), get(&p.incl, 0))],
        Shape::Rate => vec![(
            String::new(),
            ratio(get(&p.excl, 0), get(&p.excl, 1)),
            ratio(get(&p.incl, 0), get(&p.incl, 1)),
        )],
        Shape::Complex => {
            let modulus = |planes: &[Vec<f64>]| -> Vec<f64> {
                let (re, im) = (get(planes, 0), get(planes, 1));
                re.iter().zip(&im).map(|(a, b)| a.hypot(*b)).collect()
            };
            vec![(String::new(), modulus(&p.excl), modulus(&p.incl))]
        }
        Shape::TauAtomic => vec![
            (
                String::new(),
                ratio(get(&p.excl, 3), get(&p.excl, 0)),
                ratio(get(&p.incl, 3), get(&p.incl, 0)),
            ),
            (":count".into(), get(&p.excl, 0), get(&p.incl, 0)),
            (":min".into(), get(&p.excl, 1), get(&p.incl, 1)),
            (":max".into(), get(&p.excl, 2), get(&p.incl, 2)),
            (":sum".into(), get(&p.excl, 3), get(&p.incl, 3)),
        ],
    }
}
