//! TAU profiles: a directory of `profile.N.C.T` text files (node/rank N, context C,
//! thread T), or of `MULTI__<metric>/profile.N.C.T` when TAU measured several metrics.
//!
//! Each file: `<count> templated_functions[_MULTI_<metric>]`, a `# Name Calls Subrs Excl
//! Incl ProfileCalls # <metadata>…` line, one line per function (`"name" calls subrs
//! excl incl profilecalls GROUP="…"`), then aggregates and user events. With callpath
//! profiling on, functions also appear as `"a => b => c"`: those lines (and the roots
//! they start from) become the CCT and the flat lines are left out, as Hatchet's
//! `from_tau` does; without callpaths the flat functions are the roots of a flat tree.
//!
//! Each file is one profile (label `rank<N>`, or `rank<N>.<C>.<T>` past context and
//! thread 0): a directory of ranks opens as an ensemble. Metrics are Hatchet's: `time`
//! / `time (inc)` for TIME (microseconds), `<metric>` / `<metric> (inc)` for others, and
//! `Calls`, `Subrs` from the first metric. User events go to the metadata.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

/// One function line.
#[derive(Debug)]
struct Line {
    name: String,
    /// Calls, Subrs, Excl, Incl.
    values: [f64; 4],
}

/// One parsed file.
#[derive(Debug)]
struct File {
    metric: String,
    lines: Vec<Line>,
    meta: Vec<(String, String)>,
}

/// `profile.N.C.T` -> (N, C, T).
pub fn rank_of(name: &str) -> Option<(u32, u32, u32)> {
    let rest = name.strip_prefix("profile.")?;
    let mut it = rest.split('.').map(|x| x.parse::<u32>().ok());
    let r = (it.next()??, it.next()??, it.next()??);
    it.next().is_none().then_some(r)
}

/// `<attribute><name>K</name><value>V</value></attribute>` pairs.
fn attributes(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for a in text.split("<attribute>").skip(1) {
        let field = |tag: &str| {
            let open = format!("<{tag}>");
            let close = format!("</{tag}>");
            let s = a.find(&open)? + open.len();
            let e = a[s..].find(&close)? + s;
            Some(a[s..e].to_string())
        };
        if let (Some(k), Some(v)) = (field("name"), field("value")) {
            out.push((k, v));
        }
    }
    out
}

/// `"name" 1 0 449 51781 0 GROUP="…"` -> the name and the first four numbers.
fn function_line(line: &str) -> Option<Line> {
    let body = match line.rfind(" GROUP=") {
        Some(i) => &line[..i],
        None => line,
    };
    let body = body.trim_start().strip_prefix('"')?;
    let end = body.rfind('"')?;
    let name = body[..end].to_string();
    let mut nums = body[end + 1..].split_whitespace().map(|x| x.parse::<f64>());
    let mut values = [0.0; 4];
    for v in values.iter_mut() {
        *v = nums.next()?.ok()?;
    }
    Some(Line { name, values })
}

fn parse(text: &str) -> Result<File, String> {
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next().ok_or("the file is empty")?;
    let mut head = first.split_whitespace();
    let count: usize = head
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or("line 1: expected '<count> templated_functions'")?;
    let kind = head.next().unwrap_or("");
    if !kind.starts_with("templated_functions") {
        return Err("line 1: expected '<count> templated_functions'".into());
    }
    let (_, header) = lines.next().ok_or("line 2: the header line is missing")?;
    if !header.starts_with("# Name") {
        return Err("line 2: expected '# Name Calls Subrs Excl Incl …'".into());
    }
    let meta = attributes(header);
    let metric = meta
        .iter()
        .find(|(k, _)| k == "Metric Name")
        .map(|(_, v)| v.clone())
        .or_else(|| {
            kind.strip_prefix("templated_functions_MULTI_")
                .map(String::from)
        })
        .unwrap_or_else(|| "TIME".into());
    let mut fl = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let Some((i, l)) = lines.next() else {
            return Err(format!(
                "the file ends after {} of its {count} functions (truncated?)",
                fl.len()
            ));
        };
        fl.push(function_line(l).ok_or_else(|| {
            format!(
                "line {}: expected '\"name\" calls subrs excl incl …'",
                i + 1
            )
        })?);
    }
    let mut meta: Vec<(String, String)> = meta
        .into_iter()
        .filter(|(k, _)| k != "Metric Name")
        .collect();
    // Aggregates (skipped), then user events: name numevents max min mean sumsqr.
    let mut in_events = false;
    for (_, l) in lines {
        if l.ends_with(" userevents") {
            in_events = true;
            continue;
        }
        if !in_events || l.starts_with('#') {
            continue;
        }
        let Some(body) = l.strip_prefix('"') else {
            continue;
        };
        let Some(end) = body.rfind('"') else { continue };
        let nums: Vec<&str> = body[end + 1..].split_whitespace().collect();
        if nums.len() >= 4 {
            meta.push((
                format!("userevent {}", &body[..end]),
                format!(
                    "n={} max={} min={} mean={}",
                    nums[0], nums[1], nums[2], nums[3]
                ),
            ));
        }
    }
    Ok(File {
        metric,
        lines: fl,
        meta,
    })
}

/// Hatchet's metric name: TIME (and CPU_TIME) is `time`.
fn metric_name(m: &str) -> String {
    match m {
        "TIME" | "CPU_TIME" => "time".into(),
        _ => m.into(),
    }
}

/// A callpath element -> its name, and file and line when TAU gives them
/// (`name [{file} {12,1}-{30,1}]`, `name C [{file} {12,0}]`).
fn frame_of(elem: &str) -> Frame {
    let (name, loc) = match elem.split_once(" [{") {
        Some((n, l)) => (n, Some(l)),
        None => (elem, None),
    };
    let name = name.strip_suffix(" C").unwrap_or(name).trim();
    let mut f = Frame::new(name, "function");
    if let Some(loc) = loc {
        let mut parts = loc.split("} {");
        if let Some(file) = parts.next() {
            f.set_attr("file", file.trim_end_matches(['}', ']']));
        }
        if let Some(line) = parts.next() {
            let l = line.split([',', '}']).next().unwrap_or("");
            f.set_attr("line", l);
        }
    }
    f
}

/// Builds one profile from a rank's files (one per metric; the first gives the tree).
fn profile(files: &[File], source: Source) -> Result<Profile, String> {
    let first = &files[0];
    let callpaths = first.lines.iter().any(|l| l.name.contains("=>"));
    let heads: Vec<&str> = first
        .lines
        .iter()
        .filter(|l| l.name.contains("=>"))
        .map(|l| l.name.split("=>").next().unwrap_or("").trim())
        .collect();
    let mut cct = Cct::default();
    let mut rows: Vec<(u32, usize)> = Vec::new();
    for (i, l) in first.lines.iter().enumerate() {
        let path: Vec<&str> = l.name.split("=>").map(str::trim).collect();
        if callpaths && path.len() == 1 && !heads.contains(&path[0]) {
            continue;
        }
        let mut node = None;
        for e in &path {
            let f = frame_of(e);
            let n = cct.child(node, &f.name, "function");
            if cct.frame(n).attrs.is_empty() && !f.attrs.is_empty() {
                cct.frame_mut(n).attrs = f.attrs;
            }
            node = Some(n);
        }
        rows.push((node.expect("a path has a name"), i));
    }
    let n = cct.len();
    let mut metrics = MetricTable::new(n);
    let col = |file: &File, k: usize| {
        let mut v = vec![f64::NAN; n];
        for &(node, i) in &rows {
            if let Some(l) = file.lines.get(i) {
                v[node as usize] = l.values[k];
            }
        }
        v
    };
    let mut default = String::new();
    for f in files {
        let m = metric_name(&f.metric);
        let unit = if m == "time" { "us" } else { "" };
        metrics.set(&m, unit, col(f, 2));
        metrics.set(&format!("{m} (inc)"), unit, col(f, 3));
        if default.is_empty() {
            default = m;
        }
    }
    metrics.set("Calls", "", col(first, 0));
    metrics.set("Subrs", "", col(first, 1));
    cct.finish();
    Ok(Profile {
        call_graph: None,
        source,
        dialect: if callpaths {
            "TAU (callpath)"
        } else {
            "TAU (flat)"
        }
        .into(),
        cct,
        metrics,
        events: None,
        counters: None,
        meta: first.meta.clone(),
        warnings: Vec::new(),
        default_metric: default,
    })
}

/// The metric directories of a TAU directory: its `MULTI__*` sub-directories, or itself.
fn metric_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut multi: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("MULTI__"))
        })
        .collect();
    multi.sort();
    if multi.is_empty() {
        vec![dir.to_path_buf()]
    } else {
        multi
    }
}

/// `profile.N.C.T` files of a directory, by (N, C, T).
fn profiles_in(dir: &Path) -> BTreeMap<(u32, u32, u32), PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| Some((rank_of(&p.file_name()?.to_string_lossy())?, p)))
        .filter(|(_, p)| p.is_file())
        .collect()
}

fn label((n, c, t): (u32, u32, u32)) -> String {
    if c == 0 && t == 0 {
        format!("rank{n}")
    } else {
        format!("rank{n}.{c}.{t}")
    }
}

pub fn read_path(path: &Path) -> Result<Vec<Profile>, String> {
    let read = |p: &Path| -> Result<File, String> {
        let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
        parse(&String::from_utf8_lossy(&bytes)).map_err(|e| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("{name}: {e}")
        })
    };
    if path.is_file() {
        let key = path
            .file_name()
            .and_then(|n| rank_of(&n.to_string_lossy()))
            .unwrap_or((0, 0, 0));
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let source = Source {
            path: Some(path.to_path_buf()),
            format: Format::Tau,
            size,
            gzip: false,
            label: label(key),
        };
        let mut p = profile(&[read(path)?], source)?;
        // Single files given together (a glob of ranks) are labelled by rank this way.
        if key.1 == 0 && key.2 == 0 {
            p.meta.insert(0, ("mpi.rank".into(), key.0.to_string()));
        }
        return Ok(vec![p]);
    }
    let dirs = metric_dirs(path);
    let per_dir: Vec<BTreeMap<_, _>> = dirs.iter().map(|d| profiles_in(d)).collect();
    if per_dir[0].is_empty() {
        return Err("a TAU directory without profile.N.C.T files".into());
    }
    let mut out = Vec::new();
    for (&key, _) in per_dir[0].iter() {
        let mut files = Vec::new();
        let mut size = 0;
        for d in &per_dir {
            let Some(p) = d.get(&key) else { continue };
            size += std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            files.push(read(p)?);
        }
        let source = Source {
            path: Some(path.to_path_buf()),
            format: Format::Tau,
            size,
            gzip: false,
            label: label(key),
        };
        let mut p = profile(&files, source)?;
        p.meta.insert(0, ("rank".into(), key.0.to_string()));
        p.meta.insert(1, ("thread".into(), key.2.to_string()));
        out.push(p);
    }
    Ok(out)
}

pub struct Tau;

impl super::Reader for Tau {
    fn name(&self) -> &'static str {
        "TAU profiles"
    }

    fn format(&self) -> Format {
        Format::Tau
    }

    fn reads_path(&self) -> bool {
        true
    }

    /// A directory with `profile.N.C.T` files (or `MULTI__*` folders of them), or one
    /// such file that starts `<count> templated_functions`.
    fn claims(&self, probe: &super::Probe) -> bool {
        let Some(path) = probe.path else { return false };
        if probe.is_dir {
            return metric_dirs(path).iter().any(|d| !profiles_in(d).is_empty());
        }
        rank_of(&probe.name).is_some()
            && probe
                .text()
                .and_then(|t| t.split(|&b| b == b'\n').next())
                .is_some_and(|l| String::from_utf8_lossy(l).contains(" templated_functions"))
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        read_path(&input.into_path()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "3 templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls # <metadata><attribute><name>Metric Name</name><value>TIME</value></attribute><attribute><name>Node Name</name><value>n1</value></attribute></metadata>\n\".TAU application\" 1 1 10 30 0 GROUP=\"TAU_DEFAULT\" \n\"foo() [{a.c} {3,1}-{9,1}]\" 2 0 20 20 0 GROUP=\"X\" \n\".TAU application => foo() [{a.c} {3,1}-{9,1}]\" 2 0 20 20 0 GROUP=\"TAU_CALLPATH\" \n0 aggregates\n1 userevents\n# eventname numevents max min mean sumsqr\n\"Message size\" 1 4 4 4 16\n";

    fn src() -> Source {
        Source {
            path: None,
            format: Format::Tau,
            size: 0,
            gzip: false,
            label: "rank0".into(),
        }
    }

    #[test]
    fn callpaths_become_the_tree() {
        let f = parse(FILE).unwrap();
        let p = profile(&[f], src()).unwrap();
        assert_eq!(p.cct.len(), 2);
        assert_eq!(p.cct.name(1), "foo()");
        assert_eq!(p.cct.frame(1).attr("line"), Some("3"));
        assert_eq!(p.metrics.values("time (inc)").unwrap(), &[30.0, 20.0]);
        assert_eq!(p.metrics.values("Calls").unwrap(), &[1.0, 2.0]);
        assert!(p
            .meta
            .iter()
            .any(|(k, v)| k == "userevent Message size" && v.starts_with("n=1")));
        assert_eq!(p.meta_value("Node Name"), Some("n1"));
    }

    #[test]
    fn metric_folders_and_threads() {
        let dir = std::env::temp_dir().join(format!("grove-tau-{}", std::process::id()));
        for (m, scale) in [("MULTI__TIME", 1.0), ("MULTI__PAPI_L2_TCM", 7.0)] {
            std::fs::create_dir_all(dir.join(m)).unwrap();
            let metric = m.trim_start_matches("MULTI__");
            let text = FILE
                .replace("MULTI_TIME", &format!("MULTI_{metric}"))
                .replace("<value>TIME</value>", &format!("<value>{metric}</value>"))
                .replace(" 10 30 ", &format!(" {} {} ", 10.0 * scale, 30.0 * scale));
            for f in ["profile.0.0.0", "profile.0.0.1"] {
                std::fs::write(dir.join(m).join(f), &text).unwrap();
            }
        }
        let ps = read_path(&dir).unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[1].source.label, "rank0.0.1");
        assert_eq!(ps[0].metrics.values("PAPI_L2_TCM (inc)").unwrap()[0], 210.0);
        assert_eq!(ps[0].metrics.values("time (inc)").unwrap()[0], 30.0);
        assert_eq!(ps[0].metrics.unit("time"), "us");
        // One rank's file alone is that rank.
        let one = read_path(&dir.join("MULTI__TIME/profile.0.0.0")).unwrap();
        assert_eq!(one[0].meta_value("mpi.rank"), Some("0"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_files() {
        assert!(parse("").is_err());
        assert!(parse("hello\n").unwrap_err().contains("line 1"));
        let cut: String = FILE.lines().take(3).collect::<Vec<_>>().join("\n");
        assert!(parse(&cut).unwrap_err().contains("truncated"));
        let bad = FILE.replace("1 1 10 30", "x y");
        assert!(parse(&bad).unwrap_err().contains("line 3"));
        assert_eq!(rank_of("profile.3.0.12"), Some((3, 0, 12)));
        assert_eq!(rank_of("profile.3.0"), None);
    }
}
