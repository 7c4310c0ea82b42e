//! Names and kinds as Kineto writes them: thread ids, runtime calls, copy and memory
//! kinds, and the args of an event.

use crate::model::args::{ArgStore, ArgValue};

/// `globalTid`/`globalPid` -> (pid, tid).
pub(super) fn decode_global(g: i64) -> (i64, i64) {
    ((g >> 24) & 0xFF_FFFF, g & 0xFF_FFFF)
}

/// Kineto's runtime names have no ABI version: `cudaLaunchKernel_v7000` ->
/// `cudaLaunchKernel` (`cudaGetDeviceProperties_v2_v12000` -> `..._v2`). Driver names
/// keep theirs (`cuGetProcAddress_v2` is the real symbol).
pub(super) fn runtime_name(name: &str) -> &str {
    if !name.starts_with("cuda") {
        return name;
    }
    match name.rfind("_v") {
        Some(p) if name.len() - p - 2 >= 4 && name[p + 2..].bytes().all(|b| b.is_ascii_digit()) => {
            &name[..p]
        }
        _ => name,
    }
}

/// `CUDA_MEMCPY_KIND_HTOD` -> `HtoD`, `CUDA_MEMCPY_KIND_UVM_DTOH` -> `UVM DtoH`.
pub(super) fn copy_kind_from_enum(name: &str) -> Option<String> {
    let s = name.strip_prefix("CUDA_MEMCPY_KIND_")?;
    let (uvm, s) = match s.strip_prefix("UVM_") {
        Some(r) => ("UVM ", r),
        None => ("", s),
    };
    let (a, b) = s.split_once("TO")?;
    (a.len() == 1 && b.len() == 1).then(|| format!("{uvm}{a}to{b}"))
}

/// CUPTI's memcpy kinds (ENUM_CUDA_MEMCPY_OPER has the same ids).
pub(super) fn copy_kind_fallback(k: i64) -> String {
    let s = match k {
        0 => "Unknown",
        1 => "HtoD",
        2 => "DtoH",
        3 => "HtoA",
        4 => "AtoH",
        5 => "AtoA",
        6 => "AtoD",
        7 => "DtoA",
        8 => "DtoD",
        9 => "HtoH",
        10 => "PtoP",
        11 => "UVM HtoD",
        12 => "UVM DtoH",
        13 => "UVM DtoD",
        _ => return format!("kind {k}"),
    };
    s.to_string()
}

/// Nsight's memory kinds (ENUM_CUDA_MEM_KIND; not CUPTI's numbering).
pub(super) fn mem_kind_fallback(k: i64) -> String {
    let s = match k {
        0 => "Pageable",
        1 => "Pinned",
        2 => "Device",
        3 => "Array",
        4 => "Managed",
        5 => "Device Static",
        6 => "Managed Static",
        7 => "Unknown",
        _ => return format!("kind {k}"),
    };
    s.to_string()
}

/// A GPU row's args, typed (written into the event table's arg store by `done`).
/// Keys are literals; the store orders them as every consumer reads them.
pub(super) struct Args(Vec<(&'static str, ArgPending)>);

pub(super) enum ArgPending {
    Int(i64),
    Float(f64),
    Text(String),
    Triple([i64; 3]),
}

impl Args {
    pub(super) fn new() -> Args {
        Args(Vec::with_capacity(16))
    }

    pub(super) fn int(&mut self, k: &'static str, v: Option<i64>) {
        if let Some(v) = v {
            self.0.push((k, ArgPending::Int(v)));
        }
    }

    pub(super) fn float(&mut self, k: &'static str, v: f64) {
        // Non-finite bandwidths were written as 0 in the JSON text this replaces.
        let v = if v.is_finite() {
            ArgPending::Float(v)
        } else {
            ArgPending::Int(0)
        };
        self.0.push((k, v));
    }

    pub(super) fn text(&mut self, k: &'static str, v: &str) {
        self.0.push((k, ArgPending::Text(v.to_string())));
    }

    pub(super) fn triple(&mut self, k: &'static str, v: [Option<i64>; 3]) {
        if v.iter().any(|x| x.is_some()) {
            self.0
                .push((k, ArgPending::Triple(v.map(|x| x.unwrap_or(1)))));
        }
    }

    /// Appends the list to `store`; returns its id.
    pub(super) fn done(self, store: &mut ArgStore) -> u32 {
        for (k, v) in self.0 {
            let v = match v {
                ArgPending::Int(i) => ArgValue::Int(i),
                ArgPending::Float(f) => ArgValue::Float(f),
                ArgPending::Text(s) => store.str_value(&s),
                ArgPending::Triple([a, b, c]) => store.json_value(&format!("[{a},{b},{c}]")),
            };
            store.push(k, v);
        }
        store.finish()
    }
}
