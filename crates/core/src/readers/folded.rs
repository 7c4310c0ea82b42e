//! Folded stacks (`a;b;c 123`), as written by stackcollapse-*.pl, inferno and
//! `to_flamegraph`: one sample count per call path, merged into a CCT by path.

use std::io::BufRead;

use crate::model::{Cct, MetricTable};

pub struct Folded {
    pub cct: Cct,
    pub metrics: MetricTable,
    pub warnings: Vec<String>,
}

#[derive(Debug)]
pub struct FoldedError {
    pub line: u64,
    pub msg: String,
}

/// Splits `stack count` at the last run of whitespace; the count may be fractional.
pub fn split_line(line: &str) -> Option<(&str, f64)> {
    let line = line.trim_end();
    // Cut after the whole whitespace character: U+0085 and U+00A0 are two bytes, so
    // `cut + 1` would land inside one (the panic of issue 14).
    let (cut, ws) = line.char_indices().rev().find(|(_, c)| c.is_whitespace())?;
    let count: f64 = line[cut + ws.len_utf8()..].parse().ok()?;
    let stack = line[..cut].trim_end();
    if stack.is_empty() || !count.is_finite() {
        return None;
    }
    Some((stack, count))
}

pub fn read<R: BufRead>(src: R) -> Result<Folded, FoldedError> {
    let mut cct = Cct::default();
    let mut samples: Vec<f64> = Vec::new();
    let mut invalid = 0u64;
    let mut first_invalid = 0u64;
    let mut valid = 0u64;
    let mut lossy = 0u64;
    for (i, line) in src.split(b'\n').enumerate() {
        let line = line.map_err(|e| FoldedError {
            line: i as u64 + 1,
            msg: e.to_string(),
        })?;
        if std::str::from_utf8(&line).is_err() {
            lossy += 1;
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let Some((stack, count)) = split_line(line) else {
            invalid += 1;
            if first_invalid == 0 {
                first_invalid = i as u64 + 1;
            }
            continue;
        };
        valid += 1;
        let mut node = None;
        for frame in stack.split(';') {
            node = Some(cct.child(node, frame, "function"));
        }
        if let Some(n) = node {
            if samples.len() < cct.len() {
                samples.resize(cct.len(), 0.0);
            }
            samples[n as usize] += count;
        }
    }
    if valid == 0 {
        return Err(FoldedError {
            line: first_invalid.max(1),
            msg: "no line of the form 'frame;frame;... COUNT'".into(),
        });
    }
    samples.resize(cct.len(), 0.0);
    let mut metrics = MetricTable::new(cct.len());
    metrics.set("samples", "samples", samples);
    metrics.derive_inclusive(&cct, &["samples"]);
    let mut warnings = Vec::new();
    if lossy > 0 {
        warnings.push(format!(
            "{lossy} line(s) with invalid UTF-8 were decoded lossily (U+FFFD)"
        ));
    }
    if invalid > 0 {
        // A skipped line's count is unknown, so the share hidden is the share of lines.
        warnings.push(crate::model::hidden::hidden_warning(
            format!(
                "{invalid} line(s) are not 'stack count' and were skipped (first at line {first_invalid})"
            ),
            invalid as f64 / (invalid + valid) as f64,
        ));
    }
    Ok(Folded {
        cct,
        metrics,
        warnings,
    })
}

/// Strict detection: the first line of the sample (up to 64 lines that are not blank
/// or `#`/`//` comments; a line the head cuts short is left out) is `STACK COUNT` with
/// a non-negative count, no line is a header or table row of another format, and at
/// most one line in five is something else (the reader skips those with a warning,
/// as stackcollapse files from speedscope's tests carry one). A lenient test here
/// turned callgrind files, CSV tables and pprof text into made-up trees.
fn claims_text(head: &[u8]) -> bool {
    let head = head.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(head);
    let mut lines: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
    if lines.len() > 1 && !head.ends_with(b"\n") {
        lines.pop();
    }
    let (mut good, mut bad) = (0usize, 0usize);
    for l in lines {
        let t = String::from_utf8_lossy(l);
        let t = t.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with("//") {
            continue;
        }
        match folded_line(t) {
            Some(true) => good += 1,
            Some(false) if good > 0 => bad += 1,
            _ => return false,
        }
        if good + bad == 64 {
            break;
        }
    }
    good > 0 && bad * 5 <= good + bad
}

/// One line: `Some(true)` for folded stacks, `Some(false)` for a line that is not
/// but could be a stray line, `None` for a header or table row of another format.
fn folded_line(line: &str) -> Option<bool> {
    if super::describe::callgrind_line(line)
        || super::describe::perf_sample_header(line)
        || line.contains('\0')
    {
        return None;
    }
    let Some((stack, count)) = split_line(line) else {
        return Some(false);
    };
    let table_row = stack
        .chars()
        .all(|c| c.is_ascii_digit() || c.is_whitespace() || matches!(c, '.' | '-' | '+'));
    if count < 0.0 || table_row || stack.ends_with([':', '=', ',']) || stack.contains('\t') {
        return None;
    }
    Some(true)
}

/// The folded-stacks reader.
pub struct FoldedStacks;

impl super::Reader for FoldedStacks {
    fn name(&self) -> &'static str {
        "folded stacks"
    }

    fn format(&self) -> crate::model::Format {
        crate::model::Format::Folded
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        probe.json().is_none() && claims_text(probe.head)
    }

    fn read(&self, input: super::Input) -> Result<Vec<crate::model::Profile>, String> {
        let (input, source) = input.into_stream()?;
        let f = read(input).map_err(|e| format!("line {}: {}", e.line, e.msg))?;
        let mut p = crate::model::Profile {
            call_graph: None,
            source,
            dialect: "folded stacks".into(),
            cct: f.cct,
            metrics: f.metrics,
            events: None,
            counters: None,
            meta: Vec::new(),
            warnings: f.warnings,
            default_metric: "samples".into(),
        };
        p.cct.finish();
        Ok(vec![p])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_paths() {
        let text = "main;a;b 3\r\nmain;a 2\n# comment\nmain;c 1\ngarbage\n";
        let f = read(text.as_bytes()).unwrap();
        assert_eq!(f.cct.len(), 4);
        assert_eq!(f.metrics.values("samples (inc)").unwrap()[0], 6.0);
        assert_eq!(f.warnings.len(), 1);
        assert!(read(&b"nothing here\n"[..]).is_err());
    }
}
