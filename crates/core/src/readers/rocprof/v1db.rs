//! Legacy rocprof's `--hip-trace`/`--sys-trace` tables in `results.db` (rocprofiler's
//! `bin/tblextr.py`): `OPS` (device activities: kernels, barrier packets), `COPY` (copies)
//! and `HIP` (the HIP API calls on their host threads). An op's `Index` is the
//! correlation id of the HIP call that started it, within its process (`pid`).
//!
//! Columns are found by name: tblextr's layouts differ by version (ROCm 3.x/4.x `OPS`:
//! `BeginNs, EndNs, dev-id, queue-id, Name, pid, tid, Index`; later ones add
//! `roctx-range`, `stream-id`, `Data`, `__section`, `__lane`; `COPY` written from the HSA
//! copy trace has no `dev-id`), and `dform.post_process_data` appends `DurationNs`.

use super::dispatch::{ApiCall, Dispatch};

/// Rows of one table as text, the header first (as `db::table_rows` gives them).
type Rows = [Vec<String>];

fn col(rows: &Rows, name: &str) -> Option<usize> {
    rows.first()?.iter().position(|h| h == name)
}

fn int(row: &[String], i: Option<usize>) -> Option<i64> {
    row.get(i?)?.trim().parse().ok()
}

/// tblextr stores some names inside double quotes (`"<barrier packet>"`).
fn unquote(s: &str) -> String {
    s.strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or(s)
        .to_string()
}

/// What reading one table left out, for the warnings.
#[derive(Default)]
pub struct Skipped {
    pub no_times: u64,
    pub no_device: u64,
}

/// The device activities of `OPS` or `COPY` (`memcpy`). `link`: their `Index` is a
/// correlation id to join with `HIP` (only where the file has a HIP table).
pub fn ops(rows: &Rows, memcpy: bool, link: bool, skipped: &mut Skipped) -> Vec<Dispatch> {
    let (begin, end, name) = (col(rows, "BeginNs"), col(rows, "EndNs"), col(rows, "Name"));
    let (dev, queue, pid) = (col(rows, "dev-id"), col(rows, "queue-id"), col(rows, "pid"));
    let (tid, stream, index) = (col(rows, "tid"), col(rows, "stream-id"), col(rows, "Index"));
    let mut out = Vec::new();
    for r in rows.iter().skip(1) {
        let (Some(s), Some(e)) = (int(r, begin), int(r, end)) else {
            skipped.no_times += 1;
            continue;
        };
        let device = int(r, dev);
        skipped.no_device += u64::from(device.is_none());
        let mut args = Vec::new();
        for (k, i) in [("pid", pid), ("tid", tid), ("hip stream", stream)] {
            if let Some(v) = int(r, i) {
                args.push((k, v));
            }
        }
        let corr = int(r, index);
        out.push(Dispatch {
            name: name
                .and_then(|i| r.get(i))
                .map(|n| unquote(n))
                .unwrap_or_default(),
            device: device.unwrap_or(0),
            queue: int(r, queue).unwrap_or(0),
            start: s,
            end: e,
            correlation: corr,
            args,
            memcpy,
            launch_key: match (link, int(r, pid), corr) {
                (true, Some(p), Some(c)) => Some((p, c)),
                _ => None,
            },
        });
    }
    out
}

/// The HIP API calls of `HIP`; rows without times, or ending before they begin, are
/// counted in `skipped.no_times`.
pub fn hip(rows: &Rows, skipped: &mut Skipped) -> Vec<ApiCall> {
    let (begin, end, name) = (col(rows, "BeginNs"), col(rows, "EndNs"), col(rows, "Name"));
    let (pid, tid, index) = (col(rows, "pid"), col(rows, "tid"), col(rows, "Index"));
    let mut out = Vec::new();
    for r in rows.iter().skip(1) {
        let (Some(s), Some(e)) = (int(r, begin), int(r, end)) else {
            skipped.no_times += 1;
            continue;
        };
        if e < s {
            skipped.no_times += 1;
            continue;
        }
        out.push(ApiCall {
            name: name
                .and_then(|i| r.get(i))
                .map(|n| unquote(n))
                .unwrap_or_default(),
            pid: int(r, pid).unwrap_or(0),
            tid: int(r, tid).unwrap_or(0),
            start: s,
            end: e,
            correlation: int(r, index).unwrap_or(-1),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &[&[&str]]) -> Vec<Vec<String>> {
        text.iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn ops_by_column_name_either_layout() {
        let mut sk = Skipped::default();
        // The older layout, columns in tblextr's order.
        let old = rows(&[
            &[
                "BeginNs", "EndNs", "dev-id", "queue-id", "Name", "pid", "tid", "Index",
            ],
            &["10", "30", "1", "0", "k<int, 2>(int*)", "7", "8", "3"],
            &["40", "", "1", "0", "bad", "7", "8", "4"],
        ]);
        let d = ops(&old, false, true, &mut sk);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].name, "k<int, 2>(int*)");
        assert_eq!((d[0].device, d[0].start, d[0].end), (1, 10, 30));
        assert_eq!(d[0].launch_key, Some((7, 3)));
        assert_eq!(sk.no_times, 1);
        // HSA's COPY: no device column; a quoted name.
        let copy = rows(&[
            &["BeginNs", "EndNs", "Name", "pid", "tid", "Index"],
            &["5", "9", "\"async-copy\"", "7", "8", "2"],
        ]);
        let c = ops(&copy, true, false, &mut sk);
        assert_eq!(
            (c[0].name.as_str(), c[0].memcpy, c[0].launch_key),
            ("async-copy", true, None)
        );
        assert_eq!(sk.no_device, 1);
    }

    #[test]
    fn hip_calls_keep_their_correlation() {
        let mut sk = Skipped::default();
        let r = rows(&[
            &["BeginNs", "EndNs", "pid", "tid", "Name", "args", "Index"],
            &["1", "5", "7", "8", "hipLaunchKernel", "(kernel(k))", "3"],
            &["9", "6", "7", "8", "backwards", "", "4"],
        ]);
        let c = hip(&r, &mut sk);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].pid, c[0].tid, c[0].correlation), (7, 8, 3));
        assert_eq!(sk.no_times, 1);
    }
}
