//! rocprofv3's JSON output (`--output-format json`, the file `<pid>_results.json`), as
//! rocprofiler-sdk's JSON writer lays it out: `{"rocprofiler-sdk-tool": [process, ...]}`,
//! each process holding `agents`, `kernel_symbols` and `buffer_records` (with
//! `kernel_dispatch` and `memory_copy` lists) among sections grove does not read.
//!
//! Dispatches name their agent and kernel by id: the agent becomes its `node_id` (what
//! the CSV writes as `Agent N`) and the kernel its symbol's `formatted_kernel_name`
//! (what the CSV writes as `Kernel_Name`), so the profile equals the CSV reader's.

use std::collections::HashMap;
use std::io::BufRead;

use serde::Deserialize;

use super::dispatch::{self, Dispatch};
use crate::model::{Profile, Source};

/// The writer's first key, a few bytes after the opening brace.
const KEY: &[u8] = b"\"rocprofiler-sdk-tool\"";

/// Claims by content only: `{` then the `rocprofiler-sdk-tool` key before any other.
pub fn claims(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let mut rest = head.trim_ascii_start();
    let Some(r) = rest.strip_prefix(b"{") else {
        return false;
    };
    rest = r.trim_ascii_start();
    rest.starts_with(KEY)
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "rocprofiler-sdk-tool", deserialize_with = "one_or_many")]
    tool: Vec<Process>,
}

/// The writer opens a list with one object per process (rocprofiler-sdk's own tests
/// index `[0]`), yet some of those tests read the key as the object itself: both are
/// taken, through a visitor rather than an untagged enum so a parse error keeps its
/// line and column.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Process>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Vec<Process>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of processes or one process object")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(p) = seq.next_element()? {
                out.push(p);
            }
            Ok(out)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let p = Process::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
            Ok(vec![p])
        }
    }
    d.deserialize_any(V)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Process {
    agents: Vec<Agent>,
    kernel_symbols: Vec<Symbol>,
    buffer_records: Buffers,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(default)]
struct Handle {
    handle: u64,
}

#[derive(Deserialize)]
struct Agent {
    id: Handle,
    node_id: Option<i64>,
}

#[derive(Deserialize)]
struct Symbol {
    kernel_id: u64,
    #[serde(default)]
    kernel_name: Option<String>,
    #[serde(default)]
    formatted_kernel_name: Option<String>,
    #[serde(default)]
    sgpr_count: Option<i64>,
    #[serde(default)]
    arch_vgpr_count: Option<i64>,
    #[serde(default)]
    accum_vgpr_count: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Buffers {
    kernel_dispatch: Vec<KernelDispatch>,
    memory_copy: Vec<MemoryCopy>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Correlation {
    internal: Option<i64>,
}

#[derive(Deserialize)]
struct KernelDispatch {
    #[serde(default)]
    thread_id: Option<i64>,
    #[serde(default)]
    correlation_id: Correlation,
    start_timestamp: i64,
    end_timestamp: i64,
    dispatch_info: DispatchInfo,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(default)]
struct Dim3 {
    x: i64,
    y: i64,
    z: i64,
}

#[derive(Deserialize)]
struct DispatchInfo {
    agent_id: Handle,
    queue_id: Handle,
    kernel_id: u64,
    #[serde(default)]
    dispatch_id: Option<i64>,
    #[serde(default)]
    private_segment_size: Option<i64>,
    #[serde(default)]
    group_segment_size: Option<i64>,
    #[serde(default)]
    workgroup_size: Dim3,
    #[serde(default)]
    grid_size: Dim3,
}

#[derive(Deserialize)]
struct MemoryCopy {
    #[serde(default)]
    operation: i64,
    #[serde(default)]
    thread_id: Option<i64>,
    #[serde(default)]
    correlation_id: Correlation,
    start_timestamp: i64,
    end_timestamp: i64,
    dst_agent_id: Handle,
    src_agent_id: Handle,
    #[serde(default)]
    bytes: Option<i64>,
}

/// `rocprofiler_memory_copy_operation_t`, in the order the SDK numbers it.
fn copy_name(op: i64) -> &'static str {
    match op {
        1 => "CopyHostToDevice",
        2 => "CopyDeviceToHost",
        3 => "CopyHostToHost",
        4 => "CopyDeviceToDevice",
        _ => "Copy",
    }
}

pub fn read(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    let mut text = Vec::new();
    input
        .read_to_end(&mut text)
        .map_err(|e| format!("cannot read: {e}"))?;
    let file: File =
        crate::json::from_slice_as(&text).map_err(|e| format!("rocprofv3 JSON: {e}"))?;
    let mut ds = Vec::new();
    let mut warnings = Vec::new();
    let (mut no_agent, mut no_symbol) = (0u64, 0u64);
    for p in &file.tool {
        let node: HashMap<u64, i64> = p
            .agents
            .iter()
            .filter_map(|a| Some((a.id.handle, a.node_id?)))
            .collect();
        let symbols: HashMap<u64, &Symbol> =
            p.kernel_symbols.iter().map(|s| (s.kernel_id, s)).collect();
        let mut agent = |h: Handle| {
            node.get(&h.handle).copied().unwrap_or_else(|| {
                no_agent += 1;
                h.handle as i64
            })
        };
        for k in &p.buffer_records.kernel_dispatch {
            let info = &k.dispatch_info;
            let sym = symbols.get(&info.kernel_id);
            let name = sym
                .and_then(|s| s.formatted_kernel_name.clone().or(s.kernel_name.clone()))
                .unwrap_or_else(|| {
                    no_symbol += 1;
                    format!("kernel {}", info.kernel_id)
                });
            let (wg, grid) = (info.workgroup_size, info.grid_size);
            let mut args: Vec<(&'static str, i64)> = vec![
                ("grid x", grid.x),
                ("grid y", grid.y),
                ("grid z", grid.z),
                ("workgroup x", wg.x),
                ("workgroup y", wg.y),
                ("workgroup z", wg.z),
            ];
            let optional = [
                ("dispatch", info.dispatch_id),
                ("lds", info.group_segment_size),
                ("scratch", info.private_segment_size),
                ("vgpr", sym.and_then(|s| s.arch_vgpr_count)),
                ("accum vgpr", sym.and_then(|s| s.accum_vgpr_count)),
                ("sgpr", sym.and_then(|s| s.sgpr_count)),
                ("thread", k.thread_id),
            ];
            args.extend(optional.iter().filter_map(|&(key, v)| Some((key, v?))));
            ds.push(Dispatch {
                name,
                device: agent(info.agent_id),
                queue: info.queue_id.handle as i64,
                start: k.start_timestamp,
                end: k.end_timestamp,
                correlation: k.correlation_id.internal,
                args,
                memcpy: false,
                launch_key: None,
            });
        }
        for c in &p.buffer_records.memory_copy {
            let (dst, src) = (agent(c.dst_agent_id), agent(c.src_agent_id));
            let mut args = vec![("dst agent", dst), ("src agent", src)];
            args.extend(c.bytes.map(|b| ("bytes", b)));
            args.extend(c.thread_id.map(|t| ("thread", t)));
            // A copy belongs to the GPU end of it: the destination, unless it is the host.
            let device = if c.operation == 2 { src } else { dst };
            ds.push(Dispatch {
                name: copy_name(c.operation).to_string(),
                device,
                queue: 0,
                start: c.start_timestamp,
                end: c.end_timestamp,
                correlation: c.correlation_id.internal,
                args,
                memcpy: true,
                launch_key: None,
            });
        }
    }
    if no_agent > 0 {
        warnings.push(format!(
            "{no_agent} record(s) name an agent missing from `agents`; shown under its raw handle"
        ));
    }
    if no_symbol > 0 {
        warnings.push(format!(
            "{no_symbol} dispatch(es) name a kernel id missing from `kernel_symbols`; shown as `kernel <id>`"
        ));
    }
    if ds.is_empty() {
        warnings.push(
            "no kernel dispatches or memory copies (run rocprofv3 with --kernel-trace)".into(),
        );
    }
    Ok(dispatch::profile(
        ds,
        source,
        "rocprofv3 JSON (rocprofiler-sdk)".into(),
        warnings,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;

    fn src() -> Source {
        Source {
            path: None,
            format: Format::Rocprof,
            size: 0,
            gzip: false,
            label: "t".into(),
        }
    }

    #[test]
    fn claims_only_the_sdk_key_first() {
        assert!(claims(b"{\n    \"rocprofiler-sdk-tool\": [\n"));
        assert!(!claims(b"{ \"traceEvents\":[{}"));
        assert!(!claims(b"{\"a\": {\"rocprofiler-sdk-tool\": []}}"));
        assert!(!claims(b""));
    }

    #[test]
    fn one_process_object_or_a_list() {
        let one = br#"{"rocprofiler-sdk-tool": {"agents": [{"id": {"handle": 9}, "node_id": 1}],
            "kernel_symbols": [{"kernel_id": 3, "kernel_name": "k.kd"}],
            "buffer_records": {"kernel_dispatch": [{"start_timestamp": 10, "end_timestamp": 30,
            "dispatch_info": {"agent_id": {"handle": 9}, "queue_id": {"handle": 2}, "kernel_id": 3}}]}}}"#;
        let p = read(&mut &one[..], src()).unwrap();
        let ev = p.events.unwrap();
        assert_eq!(
            (ev.len(), ev.device[0], ev.stream[0], ev.dur[0]),
            (1, 1, 2, 20)
        );
        let err = read(&mut &br#"{"rocprofiler-sdk-tool": 5}"#[..], src())
            .err()
            .unwrap();
        // A value of the wrong shape says what was expected; broken JSON says where.
        assert!(err.contains("expected a list of processes"), "{err}");
        let err = read(&mut &br#"{"rocprofiler-sdk-tool": [}"#[..], src())
            .err()
            .unwrap();
        assert!(err.contains("line 1"), "{err}");
    }
}
