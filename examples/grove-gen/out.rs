//! Output: Kineto's exact event layout, with byte and event accounting.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};

use flate2::write::GzEncoder;

use crate::helpers::*;

// ---------------------------------------------------------------------------
// Output: Kineto's exact event layout, with byte and event accounting.
// ---------------------------------------------------------------------------

#[derive(Default)]
pub(crate) struct Stats {
    pub(crate) events: u64,
    pub(crate) kernels: u64,
    pub(crate) memcpy: u64,
    pub(crate) memset: u64,
    pub(crate) gpu_time_ns: u64,
    pub(crate) cpu_ops: u64,
    pub(crate) user_annotations: u64,
    pub(crate) gpu_user_annotations: u64,
    pub(crate) runtime: u64,
    pub(crate) flows: u64,
    pub(crate) unattributed: u64,
    pub(crate) unattributed_ns: u64,
    pub(crate) steps: u64,
}

/// The output file, optionally gzip-compressed.
pub(crate) enum Sink {
    Plain(BufWriter<File>),
    Gz(Box<GzEncoder<BufWriter<File>>>),
}

impl Sink {
    pub(crate) fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.write_all(b),
            Sink::Gz(w) => w.write_all(b),
        }
    }

    /// Flush everything, ending the gzip stream, so that errors surface here
    /// rather than being swallowed by Drop.
    pub(crate) fn finish(self) -> io::Result<()> {
        let mut inner = match self {
            Sink::Plain(w) => w,
            Sink::Gz(w) => w.finish()?,
        };
        inner.flush()
    }
}

pub(crate) struct Out {
    pub(crate) w: Sink,
    /// Text of the events being formatted; flushed to `w` in large chunks.
    pub(crate) buf: String,
    pub(crate) flushed: u64,
    pub(crate) stats: Stats,
}

impl Out {
    pub(crate) fn bytes(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    pub(crate) fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= 1 << 16 {
            self.flush_buf()?;
        }
        Ok(())
    }

    pub(crate) fn flush_buf(&mut self) -> io::Result<()> {
        self.w.write_all(self.buf.as_bytes())?;
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// A complete ("X") event. `args` is the body of the args object, already
    /// joined the way Kineto joins it; empty means no args object at all.
    pub(crate) fn complete(
        &mut self,
        cat: &str,
        name: &str,
        pid: u64,
        tid: u64,
        (ts, dur): (u64, u64),
        args: &str,
    ) {
        self.stats.events += 1;
        let _ = write!(
            self.buf,
            "\n  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {pid}, \"tid\": {tid},\n    \"ts\": {}, \"dur\": {}",
            Us(ts),
            Us(dur)
        );
        if !args.is_empty() {
            let _ = write!(self.buf, ",\n    \"args\": {{\n      {args}\n    }}");
        }
        self.buf.push_str("\n  },");
    }

    /// One end of a flow arrow ("s" or "f"); ends bind to the enclosing slice.
    pub(crate) fn flow(&mut self, start: bool, id: u64, pid: u64, tid: u64, ts: u64, cat: &str) {
        self.stats.events += 1;
        self.stats.flows += 1;
        let _ = write!(
            self.buf,
            "\n  {{\n    \"ph\": \"{}\", \"id\": {id}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {},\n    \"cat\": \"{cat}\", \"name\": \"{cat}\"{}\n  }},",
            if start { 's' } else { 'f' },
            Us(ts),
            if start { "" } else { ", \"bp\": \"e\"" }
        );
    }

    /// Kineto's handleDeviceInfo: three process metadata events.
    pub(crate) fn device_info(&mut self, pid: u64, name: &str, label: &str, sort: u64, ts: u64) {
        self.stats.events += 3;
        let t = Us(ts);
        let _ = write!(
            self.buf,
            "\n  {{\n    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": 0,\n    \"args\": {{\n      \"name\": \"{name}\"\n    }}\n  }},\n  {{\n    \"name\": \"process_labels\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": 0,\n    \"args\": {{\n      \"labels\": \"{label}\"\n    }}\n  }},\n  {{\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": 0,\n    \"args\": {{\n      \"sort_index\": {sort}\n    }}\n  }},"
        );
    }

    /// Kineto's handleResourceInfo: thread name and sort index.
    pub(crate) fn resource_info(&mut self, pid: u64, tid: u64, name: &str, sort: u64, ts: u64) {
        self.stats.events += 2;
        let t = Us(ts);
        let _ = write!(
            self.buf,
            "\n  {{\n    \"name\": \"thread_name\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": {tid},\n    \"args\": {{\n      \"name\": \"{name}\"\n    }}\n  }},\n  {{\n    \"name\": \"thread_sort_index\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": {tid},\n    \"args\": {{\n      \"sort_index\": {sort}\n    }}\n  }},"
        );
    }
}
