//! Chrome DevTools / V8 `.cpuprofile` JSON: `nodes` (id, callFrame {functionName, url,
//! lineNumber, columnNumber}, hitCount, children), `samples` (the node id sampled) and
//! `timeDeltas` (microseconds since the previous sample), `startTime`/`endTime`.
//!
//! The node tree is the CCT as V8 wrote it (`(root)` on top). Metrics: `samples` (count
//! per node) and `time` (µs): a sample lasts until the next one, the last one until
//! `endTime`, as DevTools draws it.

use std::collections::HashMap;
use std::io::BufRead;

use serde_json::Value;

use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

/// Strict probe: a JSON object whose first key is `nodes` holding call frames.
pub fn claims(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    let Some(rest) = t.strip_prefix('{') else {
        return false;
    };
    let rest = rest.trim_start();
    rest.starts_with("\"nodes\"") && t.contains("\"callFrame\"")
}

pub fn read(input: &mut dyn BufRead, mut source: Source) -> Result<Profile, String> {
    let doc: Value = crate::json::from_reader(input).map_err(|e| format!("not valid JSON: {e}"))?;
    let nodes = doc
        .get("nodes")
        .and_then(Value::as_array)
        .filter(|n| !n.is_empty())
        .ok_or("no nodes: not a .cpuprofile")?;
    // id -> (index in `nodes`, parent id).
    let mut index: HashMap<i64, usize> = HashMap::new();
    let mut parent: HashMap<i64, i64> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let id = n
            .get("id")
            .and_then(Value::as_i64)
            .ok_or_else(|| format!("node {i} has no id"))?;
        if index.insert(id, i).is_some() {
            return Err(format!("node id {id} appears twice"));
        }
        for c in n
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(c) = c.as_i64() {
                parent.insert(c, id);
            }
        }
    }
    // Parents before children: walk down from the roots.
    let mut cct = Cct::default();
    let mut node_of: HashMap<i64, u32> = HashMap::new();
    let mut stack: Vec<i64> = nodes
        .iter()
        .filter_map(|n| n.get("id").and_then(Value::as_i64))
        .filter(|id| !parent.contains_key(id))
        .collect();
    stack.reverse();
    if stack.is_empty() {
        return Err("every node is some node's child: the tree has no root".into());
    }
    while let Some(id) = stack.pop() {
        if node_of.contains_key(&id) {
            continue;
        }
        let n = &nodes[index[&id]];
        let fr = call_frame(n.get("callFrame"));
        let p = parent.get(&id).and_then(|p| node_of.get(p)).copied();
        node_of.insert(id, cct.add_node(p, fr));
        let kids: Vec<i64> = n
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_i64)
            .filter(|c| index.contains_key(c))
            .collect();
        stack.extend(kids.iter().rev());
    }
    let len = cct.len();
    let mut samples_v = vec![0.0; len];
    let mut time_v = vec![0.0; len];
    let mut warnings = Vec::new();
    let samples = doc.get("samples").and_then(Value::as_array);
    let deltas = doc.get("timeDeltas").and_then(Value::as_array);
    let mut unknown = 0u64;
    let total = samples.map_or(0, Vec::len);
    match samples {
        Some(samples) => {
            let start = doc.get("startTime").and_then(Value::as_f64).unwrap_or(0.0);
            let end = doc.get("endTime").and_then(Value::as_f64);
            let mut ts = Vec::with_capacity(samples.len());
            let mut t = start;
            for i in 0..samples.len() {
                t += deltas
                    .and_then(|d| d.get(i))
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                ts.push(t);
            }
            if deltas.is_none_or(|d| d.len() != samples.len()) {
                warnings
                    .push("timeDeltas do not match samples one to one; times may be off".into());
            }
            for (i, s) in samples.iter().enumerate() {
                let Some(&n) = s.as_i64().and_then(|id| node_of.get(&id)) else {
                    unknown += 1;
                    continue;
                };
                samples_v[n as usize] += 1.0;
                let next = ts.get(i + 1).copied().or(end).unwrap_or(ts[i]);
                time_v[n as usize] += (next - ts[i]).max(0.0);
            }
        }
        None => {
            // Older profiles: hit counts only.
            for (id, &n) in &node_of {
                let hits = nodes[index[id]].get("hitCount").and_then(Value::as_f64);
                samples_v[n as usize] = hits.unwrap_or(0.0);
            }
            warnings.push("no samples list: counts come from hitCount, without times".into());
        }
    }
    if unknown > 0 {
        warnings.push(crate::model::hidden::hidden_warning(
            format!("{unknown} sample(s) name no node and were skipped"),
            unknown as f64 / total as f64,
        ));
    }
    let mut metrics = MetricTable::new(len);
    metrics.set("time", "us", time_v);
    metrics.set("samples", "", samples_v);
    metrics.derive_inclusive(&cct, &["time", "samples"]);
    source.format = Format::CpuProfile;
    Ok(Profile {
        call_graph: None,
        source,
        dialect: "Chrome .cpuprofile".into(),
        cct,
        metrics,
        events: None,
        counters: None,
        meta: vec![(
            "samples".into(),
            samples.map(|s| s.len()).unwrap_or(0).to_string(),
        )],
        warnings,
        default_metric: "time".into(),
    })
}

/// A V8 `callFrame` (a `.cpuprofile` node's, or a Chrome trace's `Profile` sample
/// node's) as a frame: its function name (`(anonymous)` when empty), `url` as the file
/// and the 0-based `lineNumber` made 1-based.
pub(crate) fn call_frame(cf: Option<&Value>) -> Frame {
    let s = |k: &str| {
        cf.and_then(|c| c.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let name = match s("functionName") {
        "" => "(anonymous)",
        f => f,
    };
    let mut fr = Frame::new(name, "function");
    if !s("url").is_empty() {
        fr.set_attr("file", s("url"));
    }
    if let Some(l) = cf.and_then(|c| c.get("lineNumber")).and_then(Value::as_i64) {
        if l >= 0 {
            // 0-based in V8.
            fr.set_attr("line", &(l + 1).to_string());
        }
    }
    fr
}
