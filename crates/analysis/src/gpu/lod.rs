//! Low-memory mode (`--low-memory`, `GROVE_LOW_MEMORY=1`): once the tree and its
//! metrics are built, a trace's event table is reduced to a level-of-detail summary
//! (`model::lod::Lod`) and its rows dropped. The tree keeps every number; the kernel
//! table keeps exactly the numbers of a full load (every activity's duration is kept,
//! grouped by name, 8 bytes each instead of a row of the table); the timeline draws
//! each GPU lane's busy time in `BUCKETS` fixed buckets. What needs single events (an
//! instance's details, zooming in, gaps, the breakdowns) says it is not loaded.

use std::collections::HashMap;

use super::classify::Categories;
use super::kernels::{fill_stats, sort_rows, KernelRow, TableOptions};
use super::GpuModel;
use crate::model::events::{EventKind, EventTable};
use crate::model::lod::{Lod, LodGroup, LodLane, BUCKETS};

/// Reduces `ev` to its summary: builds the `Lod` and drops the rows, keeping the
/// strings (names). A table already reduced stays as it is.
pub fn reduce(ev: &mut EventTable, categories: &Categories) {
    if ev.lod.is_some() {
        return;
    }
    let lod = summarize(ev, categories);
    *ev = EventTable {
        strings: std::mem::take(&mut ev.strings),
        lod: Some(Box::new(lod)),
        ..Default::default()
    };
}

/// The summary of a full table.
pub fn summarize(ev: &EventTable, categories: &Categories) -> Lod {
    let model = GpuModel::new(ev, categories.clone());
    let origin = ev.ts.iter().copied().min().unwrap_or(0);
    let mut groups: Vec<LodGroup> = Vec::new();
    let mut at: HashMap<(u32, EventKind), usize> = HashMap::new();
    for (pos, &i) in model.activities.iter().enumerate() {
        let iu = i as usize;
        let key = (ev.name[iu], ev.kind[iu]);
        let g = *at.entry(key).or_insert_with(|| {
            groups.push(LodGroup {
                name: key.0,
                kind: key.1,
                first: pos as u32,
                durs: Vec::new(),
            });
            groups.len() - 1
        });
        groups[g].durs.push(ev.dur[iu]);
    }
    let start = model
        .activities
        .iter()
        .map(|&i| ev.ts[i as usize])
        .min()
        .unwrap_or(origin);
    let end = model
        .activities
        .iter()
        .map(|&i| ev.ts[i as usize].saturating_add(ev.dur[i as usize]))
        .max()
        .unwrap_or(start)
        .max(start + 1);
    let bucket_ns = ((end - start) as u64).div_ceil(BUCKETS as u64).max(1) as i64;
    let lanes = model
        .lanes
        .iter()
        .map(|lane| {
            let mut busy = vec![0i64; BUCKETS];
            let mut dominant = vec![u32::MAX; BUCKETS];
            // The longest single share of each bucket so far.
            let mut best = vec![0i64; BUCKETS];
            for &i in &lane.events {
                let iu = i as usize;
                let (a, b) = (ev.ts[iu], ev.ts[iu].saturating_add(ev.dur[iu].max(0)));
                let first = ((a - start) / bucket_ns).clamp(0, BUCKETS as i64 - 1) as usize;
                let last = ((b - start) / bucket_ns).clamp(0, BUCKETS as i64 - 1) as usize;
                for k in first..=last {
                    let lo = start + k as i64 * bucket_ns;
                    let share = b.min(lo + bucket_ns) - a.max(lo);
                    if share <= 0 && !(a == b && k == first) {
                        continue;
                    }
                    busy[k] += share.max(0);
                    if share >= best[k] {
                        best[k] = share;
                        dominant[k] = ev.name[iu];
                    }
                }
            }
            LodLane {
                label: lane.label(),
                busy,
                dominant,
            }
        })
        .collect();
    Lod {
        origin,
        from: start,
        bucket_ns,
        lanes,
        groups,
        rows: ev.len(),
    }
}

/// The kernel table from the summary: the rows `kernels::table` gives on the full
/// table (same order, same numbers, no instances), and each row's durations (for
/// `kernels::merge`).
pub fn table(
    ev: &EventTable,
    lod: &Lod,
    categories: &Categories,
    opt: &TableOptions,
) -> (Vec<KernelRow>, Vec<Vec<i64>>) {
    let category = |g: &LodGroup| -> (String, u8) {
        let c = categories.classify(ev.strings.resolve(g.name), g.kind);
        match categories.rules.get(c) {
            Some(r) => (r.name.clone(), r.color),
            None => ("other".into(), 0),
        }
    };
    let mut rows: Vec<KernelRow> = Vec::new();
    let mut durs: Vec<Vec<i64>> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    // Groups are in the order of their first instance, so the first group of a key
    // holds the key's first instance (its kind and category, as `table` takes them).
    for g in &lod.groups {
        if !opt.all && g.kind != EventKind::Kernel {
            continue;
        }
        let (cat, color) = category(g);
        let key = if opt.by_category {
            cat.clone()
        } else {
            ev.strings.resolve(g.name).to_string()
        };
        let r = *at.entry(key.clone()).or_insert_with(|| {
            rows.push(KernelRow::new(key, cat, color, g.kind));
            durs.push(Vec::new());
            rows.len() - 1
        });
        durs[r].extend_from_slice(&g.durs);
    }
    let grand: i64 = durs.iter().flatten().sum();
    for (r, d) in rows.iter_mut().zip(durs.iter_mut()) {
        fill_stats(r, d);
        r.pct = if grand > 0 {
            r.total_ns as f64 * 100.0 / grand as f64
        } else {
            0.0
        };
    }
    // Sorted as `table` sorts, the durations following their rows.
    sort_rows(&mut rows, opt.sort);
    let durs = rows
        .iter()
        .map(|r| {
            at.get(&r.name)
                .map(|&k| std::mem::take(&mut durs[k]))
                .unwrap_or_default()
        })
        .collect();
    (rows, durs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernels::{table as full_table, KernelSort};

    fn trace() -> EventTable {
        let mut t = EventTable::default();
        let rows = [
            ("gemm", EventKind::Kernel, 0, 10, 7),
            ("copy", EventKind::Memcpy, 5, 3, 7),
            ("gemm", EventKind::Kernel, 20, 30, 7),
            ("relu", EventKind::Kernel, 22, 4, 8),
            ("relu", EventKind::Kernel, 60, 6, 8),
            ("op", EventKind::Cpu, 0, 100, -1),
        ];
        for (name, kind, ts, dur, stream) in rows {
            let (n, c) = (t.strings.intern(name), t.strings.intern("cat"));
            let i = t.push(n, c, kind, ts, dur, 0, 0);
            if stream >= 0 {
                t.device[i] = 0;
                t.stream[i] = stream;
            }
        }
        t
    }

    #[test]
    fn the_kernel_table_of_the_summary_is_the_full_one() {
        let ev = trace();
        let cats = Categories::builtin();
        let model = GpuModel::new(&ev, cats.clone());
        let mut small = trace();
        reduce(&mut small, &cats);
        assert_eq!(small.len(), 0);
        let lod = small.lod.as_deref().unwrap();
        assert_eq!(lod.rows, 6);
        for all in [false, true] {
            for by_category in [false, true] {
                for sort in [KernelSort::Total, KernelSort::Mean, KernelSort::Count] {
                    let opt = TableOptions {
                        all,
                        by_category,
                        sort,
                    };
                    let want = full_table(&ev, &model, &opt);
                    let (got, durs) = table(&small, lod, &cats, &opt);
                    let text = |rows: &[KernelRow]| -> Vec<String> {
                        rows.iter()
                            .map(|r| {
                                format!(
                                    "{} {} {:?} {} {} {} {} {} {} {} {}",
                                    r.name,
                                    r.category,
                                    r.kind,
                                    r.count,
                                    r.total_ns,
                                    r.mean_ns,
                                    r.median_ns,
                                    r.min_ns,
                                    r.max_ns,
                                    r.std_ns,
                                    r.pct
                                )
                            })
                            .collect()
                    };
                    assert_eq!(text(&got), text(&want));
                    assert_eq!(durs.len(), got.len());
                    assert_eq!(durs[0].len() as u64, got[0].count);
                }
            }
        }
    }

    #[test]
    fn buckets_hold_the_busy_time_and_the_dominant_name() {
        let ev = trace();
        let lod = summarize(&ev, &Categories::builtin());
        assert_eq!(lod.lanes.len(), 2);
        assert_eq!(lod.lanes[0].label, "GPU0 s7");
        let busy: i64 = lod.lanes[0].busy.iter().sum();
        assert_eq!(busy, 10 + 3 + 30);
        let gemm = ev.strings.get("gemm").unwrap();
        assert_eq!(lod.lanes[0].dominant[0], gemm);
        assert_eq!(lod.span().0, 0);
        assert!(lod.span().1 >= 66);
    }
}
