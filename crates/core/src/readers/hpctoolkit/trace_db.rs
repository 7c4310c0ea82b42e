//! trace.db: the sample timelines of traced profiles.

use super::*;

pub(super) struct Traces {
    pub(super) traces: Vec<Trace>,
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) range: (u64, u64),
}

pub(super) fn parse_traces(d: &[u8]) -> Result<Traces, String> {
    let b = Bytes {
        name: "trace.db",
        d,
    };
    let (_minor, s) = header(&b, b"trce", b"trace.db", &["CtxTraces"])?;
    let sec = s[0];
    need(&b, sec, 0x20, "CtxTraces")?;
    let p_traces = b.u64(sec.p)?;
    let n_traces = b.u32(sec.p + 8)? as u64;
    let sz_trace = b.u8(sec.p + 0x0c)? as u64;
    need_size(&b, sec.p + 0x0c, sz_trace, 0x18, "trace header")?;
    let range = (b.u64(sec.p + 0x10)?, b.u64(sec.p + 0x18)?);
    b.check_array(
        p_traces,
        n_traces,
        sz_trace,
        sec.p,
        sec.end(),
        "trace headers",
    )?;
    let mut traces = Vec::new();
    for i in 0..n_traces {
        let th = p_traces + i * sz_trace;
        let prof = b.u32(th)? as usize;
        let start = b.u64(th + 8)?;
        let end = b.u64(th + 0x10)?;
        if end < start || (end - start) % 12 != 0 || end > b.len() {
            return Err(b.err(th + 8, format!("trace line [{start}, {end}) is not a whole number of 12-byte samples inside the file")));
        }
        let mut line = Vec::with_capacity(((end - start) / 12) as usize);
        let mut at = start;
        while at < end {
            line.push((b.u64(at)?, b.u32(at + 8)?));
            at += 12;
        }
        traces.push((prof, line));
    }
    Ok(Traces { traces, range })
}
