//! TEMPORARY (issue 10, branch h-G): detection and dispatch for the CPU-profiler readers
//! until the reader registry lists them. Delete this file when registering them there.

use std::io::BufRead;

use crate::model::{Format, Profile, Source};

/// The CPU-profiler format the first bytes claim, if any.
pub fn sniff(head: &[u8]) -> Option<Format> {
    if super::callgrind::claims(head) {
        return Some(Format::Callgrind);
    }
    if super::speedscope::claims(head) {
        return Some(Format::Speedscope);
    }
    if super::cpuprofile::claims(head) {
        return Some(Format::CpuProfile);
    }
    if super::pprof::claims(head) {
        return Some(Format::Pprof);
    }
    if super::perf::claims(head) {
        return Some(Format::PerfScript);
    }
    None
}

pub fn read(format: Format, input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    match format {
        Format::Callgrind => super::callgrind::read(input, source),
        Format::PerfScript => super::perf::read(input, source),
        Format::Speedscope => super::speedscope::read(input, source),
        Format::CpuProfile => super::cpuprofile::read(input, source),
        Format::Pprof => super::pprof::read(input, source),
        f => Err(format!("{} is not read yet", f.label())),
    }
}
