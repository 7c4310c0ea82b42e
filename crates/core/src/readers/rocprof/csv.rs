//! rocprof's CSV files: a small RFC 4180 reader (quoted fields, doubled quotes, commas
//! and newlines inside quotes; rocprof quotes kernel names, which hold commas) and the
//! two per-dispatch layouts.
//!
//! - legacy `rocprof` (`--stats`/`--hip-trace` runs, ROCm 5.x–6.x) `results.csv`:
//!   `"Index","KernelName","gpu-id","queue-id",…,"BeginNs","EndNs",…,"DurationNs"`;
//! - rocprofv3 (rocprofiler-sdk) `--kernel-trace --output-format csv`
//!   `kernel_trace.csv`: `"Kind","Agent_Id","Queue_Id",…,"Kernel_Name",
//!   "Correlation_Id","Start_Timestamp","End_Timestamp",…`.

use super::dispatch::Dispatch;

/// Parses the whole text into rows of fields.
pub fn parse(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut line = 1usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                line += 1;
                row.push(std::mem::take(&mut field));
                if !(row.len() == 1 && row[0].is_empty()) {
                    rows.push(std::mem::take(&mut row));
                }
                row.clear();
            }
            _ => field.push(c),
        }
    }
    if quoted {
        return Err(format!("line {line}: a quoted field is not closed"));
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    Ok(rows)
}

/// Older rocprof (`sqlitedb.py`'s `dump_csv` before it quoted text) writes names
/// unquoted, and a C++ kernel name holds commas (template and call arguments), so such a
/// row has more fields than the header. Every column but the name has a fixed place
/// counted from its own end of the row (rocprof's layouts put the name alone between
/// fixed columns), so the surplus fields are the name's: they are joined back with the
/// commas they were split at. Returns whether the row was mended; a row with too few
/// fields is left as it is (the caller counts it).
pub fn mend_name(row: &mut Vec<String>, columns: usize, name: usize) -> bool {
    if row.len() <= columns || name >= columns {
        return false;
    }
    let extra = row.len() - columns;
    let joined = row[name..=name + extra].join(",");
    row.splice(name..=name + extra, [joined]);
    true
}

/// The warning for rows whose name `mend_name` joined back.
pub fn mended_warning(n: u64) -> String {
    format!(
        "{n} row(s) have unquoted commas in the kernel name (as older rocprof writes them); the name is taken as everything between the fixed columns"
    )
}

/// The first line of a CSV head, its fields unquoted.
fn header_fields(head: &[u8]) -> Vec<String> {
    let end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    let line = String::from_utf8_lossy(&head[..end]);
    line.trim_end_matches('\r')
        .split(',')
        .map(|f| f.trim().trim_matches('"').to_string())
        .collect()
}

/// A rocprof CSV by its header line: the per-dispatch tables (legacy, rocprofv3) or the
/// stats table.
pub fn claims(head: &[u8]) -> bool {
    let h = header_fields(head);
    let has = |k: &str| h.iter().any(|f| f == k);
    (has("KernelName") && has("BeginNs") && has("EndNs"))
        || (has("Kernel_Name") && has("Start_Timestamp") && has("End_Timestamp"))
        || super::stats::is_stats(&h)
}

/// Column positions by name.
struct Cols<'a>(&'a [String]);

impl Cols<'_> {
    /// Case-insensitive: `rocpd` exports the same columns as `Lds_Block_Size`, `Vgpr_Count`.
    fn at(&self, k: &str) -> Option<usize> {
        self.0.iter().position(|f| f.eq_ignore_ascii_case(k))
    }
}

/// An integer field; rocprofv3 (ROCm 6.4+) writes agents as `"Agent 2"`.
fn int(row: &[String], i: Option<usize>) -> Option<i64> {
    let s = row.get(i?)?.trim();
    let s = s.strip_prefix("Agent ").unwrap_or(s).trim();
    s.parse::<i64>()
        .ok()
        .or_else(|| s.parse::<u64>().ok().map(|u| u as i64))
}

/// The args each dispatch keeps, (name in grove, column), of rocpd's `kernels` view.
const ROCPD_ARGS: &[(&str, &str)] = &[
    ("dispatch", "dispatch_id"),
    ("grid x", "grid_x"),
    ("grid y", "grid_y"),
    ("grid z", "grid_z"),
    ("workgroup x", "workgroup_x"),
    ("workgroup y", "workgroup_y"),
    ("workgroup z", "workgroup_z"),
    ("lds", "lds_size"),
    ("scratch", "scratch_size"),
    ("vgpr", "arch_vgpr_count"),
    ("accum vgpr", "accum_vgpr_count"),
    ("sgpr", "sgpr_count"),
    ("hip stream", "stream_id"),
    ("tid", "tid"),
];

/// The args of rocprofv3's kernel trace CSV.
const V3_ARGS: &[(&str, &str)] = &[
    ("dispatch", "Dispatch_Id"),
    ("grid x", "Grid_Size_X"),
    ("grid y", "Grid_Size_Y"),
    ("grid z", "Grid_Size_Z"),
    ("workgroup x", "Workgroup_Size_X"),
    ("workgroup y", "Workgroup_Size_Y"),
    ("workgroup z", "Workgroup_Size_Z"),
    // ROCm 6.2/6.3 name the segment sizes; later versions the block sizes.
    ("lds", "Group_Segment_Size"),
    ("scratch", "Private_Segment_Size"),
    ("lds", "LDS_Block_Size"),
    ("scratch", "Scratch_Size"),
    ("vgpr", "VGPR_Count"),
    ("vgpr", "Arch_VGPR_Count"),
    ("accum vgpr", "Accum_VGPR_Count"),
    ("sgpr", "SGPR_Count"),
    ("stream id", "Stream_Id"),
    ("thread", "Thread_Id"),
];

/// The args of legacy rocprof's per-dispatch CSV.
const LEGACY_ARGS: &[(&str, &str)] = &[
    ("grid", "grd"),
    ("workgroup", "wgr"),
    ("lds", "lds"),
    ("scratch", "scr"),
    ("vgpr", "arch_vgpr"),
    ("accum vgpr", "accum_vgpr"),
    ("sgpr", "sgpr"),
    ("wave size", "wave_size"),
    ("queue index", "queue-index"),
    ("pid", "pid"),
    ("tid", "tid"),
];

/// The dispatches of a per-dispatch table, the dialect, and warnings. Errors when a
/// column the timeline needs is missing; rows with unreadable times are counted.
pub fn dispatches(rows: &[Vec<String>]) -> Result<(Vec<Dispatch>, String, Vec<String>), String> {
    let header = &rows[0];
    let c = Cols(header);
    let v3 = c.at("Kernel_Name").is_some();
    // rocpd's `kernels` view: lower-case names, the agent as its index among GPUs.
    let rocpd = !v3 && c.at("name").is_some() && c.at("start").is_some();
    let (name, dev, queue, start, end, corr, dialect) = if rocpd {
        (
            c.at("name"),
            c.at("agent_type_index").or(c.at("agent_absolute_index")),
            c.at("queue_id"),
            c.at("start"),
            c.at("end"),
            c.at("correlation_id"),
            "rocprofv3 rocpd database",
        )
    } else if v3 {
        (
            c.at("Kernel_Name"),
            c.at("Agent_Id"),
            c.at("Queue_Id"),
            c.at("Start_Timestamp"),
            c.at("End_Timestamp"),
            c.at("Correlation_Id"),
            "rocprofv3 kernel trace CSV (rocprofiler-sdk)",
        )
    } else {
        (
            c.at("KernelName"),
            c.at("gpu-id"),
            c.at("queue-id"),
            c.at("BeginNs"),
            c.at("EndNs"),
            c.at("Index"),
            "rocprof per-dispatch CSV (legacy rocprof)",
        )
    };
    let (Some(name), Some(start), Some(end)) = (name, start, end) else {
        return Err("a rocprof CSV without its kernel name, begin and end columns".into());
    };
    let args = if rocpd {
        ROCPD_ARGS
    } else if v3 {
        V3_ARGS
    } else {
        LEGACY_ARGS
    };
    let extra: Vec<(&'static str, Option<usize>)> =
        args.iter().map(|&(k, col)| (k, c.at(col))).collect();
    let mut out = Vec::with_capacity(rows.len());
    let mut warnings = Vec::new();
    let mut bad = 0u64;
    let mut no_lane = 0u64;
    let mut mended = 0u64;
    let mut short = 0u64;
    let mut fixed;
    for row in &rows[1..] {
        let is_short = row.len() < header.len();
        let row = if row.len() > header.len() {
            fixed = row.clone();
            mended += u64::from(mend_name(&mut fixed, header.len(), name));
            &fixed
        } else {
            row
        };
        let (Some(s), Some(e)) = (int(row, Some(start)), int(row, Some(end))) else {
            bad += 1;
            short += u64::from(is_short);
            continue;
        };
        let (device, queue) = (int(row, dev), int(row, queue));
        if device.is_none() || queue.is_none() {
            no_lane += 1;
        }
        out.push(Dispatch {
            // The SQLite copy keeps the CSV's quotes inside the text.
            name: row
                .get(name)
                .map(|n| {
                    n.strip_prefix('"')
                        .and_then(|x| x.strip_suffix('"'))
                        .unwrap_or(n)
                        .to_string()
                })
                .unwrap_or_default(),
            device: device.unwrap_or(0),
            queue: queue.unwrap_or(0),
            start: s,
            end: e,
            correlation: int(row, corr),
            args: extra
                .iter()
                .filter_map(|&(k, i)| int(row, i).map(|v| (k, v)))
                .collect(),
            memcpy: false,
            launch_key: None,
        });
    }
    if mended > 0 {
        warnings.push(mended_warning(mended));
    }
    if bad > 0 {
        let why = if short > 0 {
            format!(" ({short} have fewer fields than the header)")
        } else {
            String::new()
        };
        warnings.push(crate::model::hidden::hidden_warning(
            format!("{bad} row(s) without a readable begin/end time{why}; left out"),
            bad as f64 / (rows.len() - 1).max(1) as f64,
        ));
    }
    if no_lane > 0 {
        warnings.push(format!(
            "{no_lane} dispatch(es) name no GPU or queue; placed on GPU 0 queue 0"
        ));
    }
    if out.is_empty() {
        return Err(match bad {
            0 => "a rocprof CSV with no dispatch row".into(),
            n => format!("a rocprof CSV whose {n} row(s) have no readable times"),
        });
    }
    Ok((out, dialect.into(), warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields() {
        let rows = parse("\"a\",\"b, c\",\"d \"\"e\"\"\"\r\n1,2,3\n").unwrap();
        assert_eq!(rows[0], vec!["a", "b, c", "d \"e\""]);
        assert_eq!(rows[1], vec!["1", "2", "3"]);
        assert!(parse("\"a,b\n").is_err());
    }

    #[test]
    fn rocprofv3_layouts() {
        // ROCm 6.2 (segment sizes, numeric agents) and 6.4+ (block sizes, "Agent N").
        for text in [
            "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Private_Segment_Size\",\"Group_Segment_Size\"\n\"KERNEL_DISPATCH\",2,1,15,\"k(int)\",7,100,250,0,64\n",
            "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\",\"Scratch_Size\"\n\"KERNEL_DISPATCH\",\"Agent 2\",1,0,70,1,15,\"k(int)\",7,100,250,64,0\n",
        ] {
            let rows = parse(text).unwrap();
            let (d, dialect, w) = dispatches(&rows).unwrap();
            assert!(dialect.contains("rocprofv3"));
            assert!(w.is_empty(), "{w:?}");
            assert_eq!((d[0].device, d[0].queue, d[0].start, d[0].end), (2, 1, 100, 250));
            assert_eq!(d[0].correlation, Some(7));
            assert!(d[0].args.contains(&("lds", 64)), "{:?}", d[0].args);
        }
    }

    #[test]
    fn mend_name_joins_the_surplus_fields() {
        let mut r: Vec<String> = ["0", "k<int", " float>(int", " int)", "2", "100", "200"]
            .map(String::from)
            .to_vec();
        assert!(mend_name(&mut r, 5, 1));
        assert_eq!(r, ["0", "k<int, float>(int, int)", "2", "100", "200"]);
        let mut ok: Vec<String> = ["0", "k", "2"].map(String::from).to_vec();
        assert!(!mend_name(&mut ok, 3, 1));
        assert!(!mend_name(&mut ok, 4, 1));
    }

    /// Legacy `results.csv` with an unquoted name: every dispatch is read, named in full.
    #[test]
    fn unquoted_kernel_names_in_dispatch_rows() {
        let rows = parse(
            "Index,KernelName,gpu-id,queue-id,BeginNs,EndNs\n\
             0,void k<int, float>(int*, int),2,0,100,250\n\
             1,plain.kd,2,0,300,310\n",
        )
        .unwrap();
        let (d, _, w) = dispatches(&rows).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].name, "void k<int, float>(int*, int)");
        assert_eq!((d[0].device, d[0].start, d[0].end), (2, 100, 250));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("unquoted commas"));
    }

    #[test]
    fn claims_headers() {
        assert!(claims(
            b"\"Index\",\"KernelName\",\"gpu-id\",\"BeginNs\",\"EndNs\"\n0"
        ));
        assert!(claims(
            b"\"Kind\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n"
        ));
        assert!(claims(
            b"\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n"
        ));
        assert!(!claims(b"a,b,c\n1,2,3\n"));
    }
}
