//! An ensemble's events: the members' event tables appended into one, so the timeline
//! shows every member's lanes, grouped under a header per member. Each member's
//! processes are renamed `LABEL:pid`, so threads of different members never merge and
//! a kernel's launch is looked for in its own member; every row keeps its member
//! (`EventTable::member`), which GPU lanes are keyed by. Nodes are mapped to the union
//! tree and launches to the merged rows.

use crate::model::events::{CounterTable, EventTable, Row, NONE_U32};
use crate::model::NO_NODE;

/// One member as the merge takes it.
pub struct Member {
    pub label: String,
    pub events: EventTable,
    pub counters: Option<CounterTable>,
    /// The member's node ids to the union tree's (`Union::add`).
    pub nodes: Vec<u32>,
}

/// String ids of one table mapped into another's, each interned once.
struct Ids {
    memo: Vec<u32>,
}

impl Ids {
    fn new(n: usize) -> Ids {
        Ids {
            memo: vec![u32::MAX; n],
        }
    }

    fn map(&mut self, id: u32, text: impl FnOnce() -> String, dest: &mut EventTable) -> u32 {
        match self.memo.get(id as usize) {
            Some(&m) if m != u32::MAX => m,
            Some(_) => {
                let m = dest.strings.intern(&text());
                self.memo[id as usize] = m;
                m
            }
            None => dest.strings.intern(&text()),
        }
    }
}

/// The merged table and counters. When the members' clocks share no instant (runs
/// made at different times, `base` beside `test`), each member is shifted to start
/// where the first does, and the returned note says so.
pub fn merge(members: Vec<Member>) -> (EventTable, CounterTable, Option<String>) {
    let spans: Vec<Option<(i64, i64)>> = members
        .iter()
        .map(|m| {
            let ev = &m.events;
            let a = ev.ts.iter().copied().min()?;
            let b = (0..ev.len()).map(|i| ev.ts[i] + ev.dur[i].max(0)).max()?;
            Some((a, b))
        })
        .collect();
    let known: Vec<(i64, i64)> = spans.iter().flatten().copied().collect();
    let common = known.iter().map(|s| s.0).max() < known.iter().map(|s| s.1).min();
    let first = known.iter().map(|s| s.0).min().unwrap_or(0);
    let note = (!common && known.len() > 1).then(|| {
        "the ensemble's members share no instant (separate runs): each member's timeline \
         is shifted to start with the first's"
            .to_string()
    });
    let mut out = EventTable::default();
    let mut counters = CounterTable::default();
    for (m, member) in members.into_iter().enumerate() {
        let shift = match (&note, spans[m]) {
            (Some(_), Some((a, _))) => first - a,
            _ => 0,
        };
        append(&mut out, &mut counters, m as u16, member, shift);
    }
    (out, counters, note)
}

/// Appends one member's rows (and counter samples), times moved by `shift`.
fn append(out: &mut EventTable, counters: &mut CounterTable, m: u16, mb: Member, shift: i64) {
    let src = &mb.events;
    let base = out.len() as u32;
    let mut ids = Ids::new(src.strings.len());
    let mut pids = Ids::new(src.strings.len());
    let (mut arg_ids, mut shapes) = (Vec::new(), Vec::new());
    let label = &mb.label;
    let pid_of = |p: u32| format!("{label}:{}", src.strings.resolve(p));
    for i in 0..src.len() {
        let mut r = Row::new(
            ids.map(src.name[i], || src.strings.resolve(src.name[i]).into(), out),
            ids.map(src.cat[i], || src.strings.resolve(src.cat[i]).into(), out),
            src.kind[i],
            src.ts[i] + shift,
            src.dur[i],
            pids.map(src.pid[i], || pid_of(src.pid[i]), out),
            ids.map(src.tid[i], || src.strings.resolve(src.tid[i]).into(), out),
        );
        r.device = src.device[i];
        r.stream = src.stream[i];
        r.correlation = src.correlation[i];
        r.external_id = src.external_id[i];
        r.record_function_id = src.record_function_id[i];
        r.args = match src.args[i] {
            NONE_U32 => NONE_U32,
            a => src
                .arg_store
                .copy_list(a, &mut out.arg_store, &mut arg_ids, &mut shapes),
        };
        r.seq = base + src.seq.get(i);
        r.begin_end = src.begin_end[i];
        out.push_row(&r);
        let node = src.node.get(i).copied().unwrap_or(NO_NODE);
        out.node
            .push(mb.nodes.get(node as usize).copied().unwrap_or(NO_NODE));
        let launch = src.launch.get(i).copied().unwrap_or(NONE_U32);
        out.launch.push(if launch == NONE_U32 {
            NONE_U32
        } else {
            base + launch
        });
        out.member.push(m);
    }
    out.members.push(mb.label.clone());
    if let Some(c) = &mb.counters {
        for k in 0..c.ts.len() {
            counters
                .name
                .push(ids.map(c.name[k], || src.strings.resolve(c.name[k]).into(), out));
            counters.series.push(ids.map(
                c.series[k],
                || src.strings.resolve(c.series[k]).into(),
                out,
            ));
            counters
                .pid
                .push(pids.map(c.pid[k], || pid_of(c.pid[k]), out));
            counters.ts.push(c.ts[k] + shift);
            counters.value.push(c.value[k]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;

    fn table(t0: i64, pid: &str) -> EventTable {
        let mut ev = EventTable::default();
        let (n, p, t) = (
            ev.strings.intern("k"),
            ev.strings.intern(pid),
            ev.strings.intern("7"),
        );
        ev.push(n, n, EventKind::Runtime, t0, 10, p, t);
        ev.push(n, n, EventKind::Kernel, t0 + 20, 10, p, t);
        ev.node = vec![1, 2];
        ev
    }

    #[test]
    fn members_keep_their_rows_processes_and_links() {
        let member = |label: &str, t0| {
            let mut ev = table(t0, "12");
            ev.launch = Default::default();
            ev.launch.push(NONE_U32);
            ev.launch.push(0);
            Member {
                label: label.into(),
                events: ev,
                counters: None,
                nodes: vec![0, 5, 6],
            }
        };
        // Overlapping clocks (ranks of one run): times kept.
        let (ev, _, note) = merge(vec![member("rank0", 1000), member("rank1", 1005)]);
        assert!(note.is_none());
        assert_eq!(ev.len(), 4);
        assert_eq!(ev.ts, vec![1000, 1020, 1005, 1025]);
        assert_eq!(ev.member, vec![0, 0, 1, 1]);
        assert_eq!(ev.strings.resolve(ev.pid[2]), "rank1:12");
        assert_eq!(ev.node, vec![5, 6, 5, 6]);
        assert_eq!(ev.launch.get(3).copied(), Some(2));
        assert_eq!(ev.members, vec!["rank0", "rank1"]);
        // Separate runs: the second moved to the first's start, and said.
        let (ev, _, note) = merge(vec![member("base", 1000), member("test", 9_000_000)]);
        assert!(note.is_some());
        assert_eq!(ev.ts[2], 1000);
    }
}
