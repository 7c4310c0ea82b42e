//! Names and kinds as Kineto writes them: thread ids, runtime calls, copy and memory
//! kinds, and the args of an event.

use super::*;

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

/// Args JSON text in Kineto's key order. Keys are literals without quotes or escapes.
pub(super) struct Args(pub(super) String);

impl Args {
    pub(super) fn new() -> Args {
        let mut s = String::with_capacity(256);
        s.push('{');
        Args(s)
    }

    pub(super) fn key(&mut self, k: &str) {
        if self.0.len() > 1 {
            self.0.push_str(", ");
        }
        self.0.push('"');
        self.0.push_str(k);
        self.0.push_str("\": ");
    }

    pub(super) fn int(&mut self, k: &str, v: Option<i64>) {
        if let Some(v) = v {
            self.key(k);
            let _ = write!(self.0, "{v}");
        }
    }

    pub(super) fn float(&mut self, k: &str, v: f64) {
        self.key(k);
        match serde_json::Number::from_f64(v) {
            Some(n) => {
                let _ = write!(self.0, "{n}");
            }
            None => self.0.push('0'),
        }
    }

    pub(super) fn text(&mut self, k: &str, v: &str) {
        self.key(k);
        self.0
            .push_str(&serde_json::to_string(v).unwrap_or_else(|_| "\"\"".into()));
    }

    pub(super) fn triple(&mut self, k: &str, v: [Option<i64>; 3]) {
        if v.iter().any(|x| x.is_some()) {
            self.key(k);
            let [a, b, c] = v.map(|x| x.unwrap_or(1));
            let _ = write!(self.0, "[{a}, {b}, {c}]");
        }
    }

    pub(super) fn done(mut self) -> Box<str> {
        self.0.push('}');
        self.0.into_boxed_str()
    }
}
