//! Headless renderings of a tree: Hatchet's `tree()` text, Hatchet literal JSON,
//! grove's own JSON, CSV and folded stacks.

pub mod json;
pub mod text;

use crate::model::{Cct, PreOrder};

/// Which nodes an export walks: the pre-order positions at depth <= max_depth.
pub fn visible_positions(po: &PreOrder, max_depth: Option<usize>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut p = 0u32;
    let n = po.len() as u32;
    while p < n {
        out.push(p);
        match max_depth {
            Some(d) if po.depth[p as usize] as usize >= d => p = po.end[p as usize],
            _ => p += 1,
        }
    }
    out
}

/// Children in data order, as Hatchet prints them (by node id).
pub fn data_order(cct: &Cct) -> PreOrder {
    PreOrder::build(cct, |v| v.sort_unstable())
}
