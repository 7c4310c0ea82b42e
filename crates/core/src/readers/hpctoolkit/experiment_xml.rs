//! Old format: experiment.xml and the *.metric-db files.

use super::*;

#[derive(Debug, Clone)]
pub(super) struct OldMetric {
    pub(super) id: String,
    pub(super) name: String,
    /// "inclusive", "exclusive" or "nil"
    pub(super) kind: String,
    pub(super) db_id: Option<usize>,
}

impl OldMetric {
    pub(super) fn inclusive(&self) -> bool {
        self.kind == "inclusive"
    }

    pub(super) fn exclusive(&self) -> bool {
        self.kind == "exclusive"
    }

    /// `CPUTIME (usec):Sum (I)` -> `CPUTIME (usec) (inc)`; `...:Max (E)` -> `...:max`.
    pub(super) fn column(&self) -> String {
        let mut base = self.name.trim();
        for s in [" (I)", " (E)", " (X)"] {
            if let Some(b) = base.strip_suffix(s) {
                base = b;
                break;
            }
        }
        let mut base = base.to_string();
        if let Some((head, stat)) = base.rsplit_once(':') {
            if !stat.contains(' ') && !stat.is_empty() {
                base = match stat {
                    "Sum" => head.to_string(),
                    s => format!("{head}:{}", s.to_ascii_lowercase()),
                };
            }
        }
        if self.inclusive() {
            inclusive_name(&base)
        } else {
            base
        }
    }
}

pub(super) struct OldTree {
    pub(super) version: String,
    pub(super) title: String,
    pub(super) summary_metrics: Vec<OldMetric>,
    pub(super) db_metrics: Vec<OldMetric>,
    pub(super) cct: Cct,
    /// nid -> node
    pub(super) node_of: HashMap<u32, u32>,
    /// (statement nid, XML parent nid): Hatchet moves statement costs out of parents.
    pub(super) statements: Vec<(u32, u32)>,
    /// Summary values (nid, index into summary_metrics, value).
    pub(super) values: Vec<(u32, usize, f64)>,
    pub(super) totals: Vec<(usize, f64)>,
    pub(super) warnings: Vec<String>,
}

#[derive(PartialEq, Clone, Copy)]
pub(super) enum Place {
    Other,
    Header,
    Data,
}

/// An open element: its tag, place, the node for its children, its nid and the file
/// for its statements.
struct Open {
    tag: String,
    place: Place,
    node: Option<u32>,
    nid: Option<u32>,
    file: Option<Arc<str>>,
}

/// The header's tables, by id: load modules, files, procedures, summary metrics.
#[derive(Default)]
struct HeaderTables {
    modules: HashMap<String, Arc<str>>,
    files: HashMap<String, Arc<str>>,
    procs: HashMap<String, String>,
    metric_ix: HashMap<String, usize>,
}

/// The value of `key` in `table`, else the key itself.
fn lookup(table: &HashMap<String, Arc<str>>, key: Option<&str>) -> Option<Arc<str>> {
    let k = key?;
    Some(table.get(k).cloned().unwrap_or_else(|| k.into()))
}

impl HeaderTables {
    /// An element of the header section (`Metric`, `MetricDB`, `LoadModule`, `File`,
    /// `Procedure`).
    fn element(&mut self, t: &mut OldTree, tag: &str, attrs: &[(String, String)]) {
        let pair = || attr(attrs, "i").zip(attr(attrs, "n"));
        match tag {
            "Metric" => {
                let m = OldMetric {
                    id: attr(attrs, "i").unwrap_or("").to_string(),
                    name: attr(attrs, "n").unwrap_or("").to_string(),
                    kind: attr(attrs, "t").unwrap_or("nil").to_string(),
                    db_id: None,
                };
                self.metric_ix.insert(m.id.clone(), t.summary_metrics.len());
                t.summary_metrics.push(m);
            }
            "MetricDB" => {
                let db_id = attr(attrs, "db-id")
                    .or(attr(attrs, "i"))
                    .and_then(|v| v.parse().ok());
                t.db_metrics.push(OldMetric {
                    id: attr(attrs, "i").unwrap_or("").to_string(),
                    name: attr(attrs, "n").unwrap_or("").to_string(),
                    kind: attr(attrs, "t").unwrap_or("nil").to_string(),
                    db_id,
                });
            }
            "LoadModule" => {
                if let Some((i, n)) = pair() {
                    self.modules.insert(i.into(), n.into());
                }
            }
            "File" => {
                if let Some((i, n)) = pair() {
                    self.files.insert(i.into(), n.into());
                }
            }
            "Procedure" => {
                if let Some((i, n)) = pair() {
                    self.procs.insert(i.into(), n.into());
                }
            }
            _ => {}
        }
    }

    /// The frame of a scope element of the data section (`PF`, `Pr`, `L`, `S`); None
    /// for call sites and nameless inlined procedures.
    fn scope_frame(
        &self,
        tag: &str,
        attrs: &[(String, String)],
        file: &Option<Arc<str>>,
        scope_file: &Option<Arc<str>>,
        line: &Option<String>,
    ) -> Option<Frame> {
        match tag {
            "PF" | "Pr" => {
                let n = attr(attrs, "n").unwrap_or("");
                let name = self.procs.get(n).cloned().unwrap_or_else(|| n.to_string());
                if tag == "Pr" && name.is_empty() {
                    None
                } else {
                    let mut f = Frame::new(&name, "function");
                    if let Some(file) = file {
                        f.attrs.push(("file".into(), file.clone()));
                    }
                    if let Some(l) = line {
                        f.attrs.push(("line".into(), l.as_str().into()));
                    }
                    if let Some(m) = lookup(&self.modules, attr(attrs, "lm")) {
                        f.attrs.push(("module".into(), m));
                    }
                    if tag == "Pr" {
                        f.attrs.push(("inlined".into(), "true".into()));
                    }
                    Some(f)
                }
            }
            "L" => Some(source_frame("loop at ", "loop", scope_file, line)),
            "S" => Some(source_frame("", "line", scope_file, line)),
            // Call sites are not nodes (as in Hatchet): the callee hangs from the caller.
            _ => None,
        }
    }
}

impl OldTree {
    fn new() -> OldTree {
        OldTree {
            version: String::new(),
            title: String::new(),
            summary_metrics: Vec::new(),
            db_metrics: Vec::new(),
            cct: Cct::default(),
            node_of: HashMap::new(),
            statements: Vec::new(),
            values: Vec::new(),
            totals: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

pub(super) fn parse_experiment(s: &[u8]) -> Result<OldTree, String> {
    let mut x = Xml::new(s);
    let mut t = OldTree::new();
    let mut tables = HeaderTables::default();
    let mut stack: Vec<Open> = Vec::new();
    let mut sections = 0usize;
    let mut seen_root = false;
    loop {
        match x.next()? {
            Tok::Eof => break,
            Tok::End { name, pos } => match stack.pop() {
                Some(o) if o.tag == name => {}
                Some(o) => return Err(x.err(pos, format!("</{name}> closes <{}>", o.tag))),
                None => return Err(x.err(pos, format!("</{name}> without an open element"))),
            },
            Tok::Start {
                name,
                attrs,
                empty,
                pos,
            } => {
                if stack.is_empty() {
                    if seen_root {
                        return Err(x.err(pos, "a second root element"));
                    }
                    seen_root = true;
                    if name != "HPCToolkitExperiment" {
                        return Err(x.err(
                            pos,
                            format!("root element is <{name}>, not <HPCToolkitExperiment>"),
                        ));
                    }
                    t.version = attr(&attrs, "version").unwrap_or("").to_string();
                }
                let parent = stack.last();
                let place = parent.map(|p| p.place).unwrap_or(Place::Other);
                let parent_node = parent.and_then(|p| p.node);
                let parent_nid = parent.and_then(|p| p.nid);
                let parent_file = parent.and_then(|p| p.file.clone());
                let mut open = Open {
                    tag: name.clone(),
                    place,
                    node: parent_node,
                    nid: None,
                    file: parent_file.clone(),
                };
                let skip_section = sections > 1;
                match (place, name.as_str()) {
                    (_, "SecCallPathProfile") => {
                        sections += 1;
                        if sections > 1 {
                            t.warnings
                                .push("only the first call path profile section is read".into());
                        }
                    }
                    (_, "Header") if t.title.is_empty() => {
                        t.title = attr(&attrs, "n").unwrap_or("").to_string();
                    }
                    (_, "SecHeader") if !skip_section => open.place = Place::Header,
                    (_, "SecCallPathProfileData") if !skip_section => open.place = Place::Data,
                    (
                        Place::Header,
                        tag @ ("Metric" | "MetricDB" | "LoadModule" | "File" | "Procedure"),
                    ) => tables.element(&mut t, tag, &attrs),
                    (Place::Data, "M") => {
                        let v = attr(&attrs, "v").and_then(|v| v.trim().parse::<f64>().ok());
                        let m = attr(&attrs, "n")
                            .and_then(|n| tables.metric_ix.get(n))
                            .copied();
                        if let (Some(v), Some(m)) = (v, m) {
                            match parent.and_then(|p| p.nid) {
                                Some(nid) => t.values.push((nid, m, v)),
                                None => t.totals.push((m, v)),
                            }
                        }
                    }
                    (Place::Data, tag @ ("PF" | "Pr" | "L" | "C" | "S")) => {
                        let nid: u32 =
                            attr(&attrs, "i")
                                .and_then(|v| v.parse().ok())
                                .ok_or_else(|| {
                                    x.err(pos, format!("<{tag}> without a numeric node id i"))
                                })?;
                        open.nid = Some(nid);
                        let line =
                            attr(&attrs, "l").map(|l| l.split('-').next().unwrap_or(l).to_string());
                        let file = lookup(&tables.files, attr(&attrs, "f"));
                        if file.is_some() {
                            open.file = file.clone();
                        }
                        let frame = tables.scope_frame(tag, &attrs, &file, &open.file, &line);
                        if let Some(mut frame) = frame {
                            frame.attrs.push(("nid".into(), nid.to_string().into()));
                            let node = t.cct.add_node(parent_node, frame);
                            if t.node_of.insert(nid, node).is_some() {
                                return Err(x.err(pos, format!("node id {nid} appears twice")));
                            }
                            open.node = Some(node);
                            if tag == "S" {
                                if let Some(p) = parent_nid {
                                    t.statements.push((nid, p));
                                }
                            }
                        }
                    }
                    _ => {}
                }
                if !empty {
                    stack.push(open);
                }
            }
        }
    }
    if let Some(o) = stack.last() {
        return Err(x.err(
            x.s.len(),
            format!("the file ends inside <{}> (truncated?)", o.tag),
        ));
    }
    if !seen_root {
        return Err(x.err(0, "no <HPCToolkitExperiment> element"));
    }
    t.cct.finish();
    Ok(t)
}

/// (rank, thread) from `1.cpi-000003-001-a8c00270-160446-0.metric-db`.
pub(super) fn rank_thread(file: &str) -> Option<(u32, u32)> {
    let stem = file.strip_suffix(".metric-db")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() < 6 {
        return None;
    }
    let n = parts.len();
    Some((parts[n - 5].parse().ok()?, parts[n - 4].parse().ok()?))
}

/// A big-endian metric-db: `HPCPROF-metricdb__` + version + endianness (24 bytes), u32
/// node count, u32 metric count, then f64 values [node][metric] for nodes 1..=count.
pub(super) fn parse_metric_db(name: &str, d: &[u8]) -> Result<(usize, usize, Vec<f64>), String> {
    let err = |off: usize, msg: &str| format!("{name}: at byte {off}: {msg}");
    if d.len() < 32 || !d.starts_with(b"HPCPROF-metricdb") {
        return Err(err(0, "not an HPCPROF-metricdb file (or truncated header)"));
    }
    if d[23] != b'b' {
        return Err(err(23, "only big-endian metric-db files are supported"));
    }
    let nodes = u32::from_be_bytes(d[24..28].try_into().unwrap()) as usize;
    let metrics = u32::from_be_bytes(d[28..32].try_into().unwrap()) as usize;
    let need = nodes
        .checked_mul(metrics)
        .and_then(|n| n.checked_mul(8))
        .and_then(|n| n.checked_add(32));
    match need {
        Some(n) if n <= d.len() => {}
        _ => {
            return Err(err(
                24,
                &format!(
                "{nodes} nodes × {metrics} metrics need more than the file's {} bytes (truncated?)",
                d.len()
            ),
            ))
        }
    }
    let values = d[32..32 + nodes * metrics * 8]
        .chunks_exact(8)
        .map(|c| f64::from_be_bytes(c.try_into().unwrap()))
        .collect();
    Ok((nodes, metrics, values))
}

/// Hatchet's statement rule: a statement's exclusive cost is subtracted from its XML
/// parent's (procedure frames and loops then keep only what no statement holds).
pub(super) fn subtract_statements(vals: &mut HashMap<u32, f64>, statements: &[(u32, u32)]) {
    for &(s, p) in statements {
        if let Some(&v) = vals.get(&s) {
            if let Some(pv) = vals.get_mut(&p) {
                *pv -= v;
            }
        }
    }
}

pub(super) fn read_old(dir: &Path) -> Result<Vec<Profile>, String> {
    let xml = read_file(&dir.join("experiment.xml"), "experiment.xml")?;
    let t = parse_experiment(&xml)?;
    let mut dbs: Vec<(Option<(u32, u32)>, String)> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".metric-db"))
        .map(|n| (rank_thread(&n), n))
        .collect();
    dbs.sort();
    let threads = dbs.iter().any(|(rt, _)| rt.is_some_and(|(_, t)| t != 0));
    let old = Old {
        t: &t,
        dir,
        dialect: format!("HPCToolkit experiment.xml {} (+ metric-db)", t.version),
    };
    let mut size = dir_size(dir, &["experiment.xml"]);
    let mut out = Vec::new();
    // The summary: the values in experiment.xml (summed over ranks by hpcprof-mpi).
    if !t.values.is_empty() {
        out.push(old.summary());
    }
    for (rt, file) in &dbs {
        let data = read_file(&dir.join(file), file)?;
        size += data.len() as u64;
        let label = match rt {
            Some((r, th)) if threads => format!("rank {r} thread {th}"),
            Some((r, _)) => format!("rank {r}"),
            None => file.trim_end_matches(".metric-db").to_string(),
        };
        out.push(old.metric_db(file, &data, label)?);
    }
    if out.is_empty() {
        // A tree without values still shows the structure.
        let warnings =
            vec!["experiment.xml has no metric values and there are no *.metric-db files".into()];
        let metrics = MetricTable::new(t.cct.len());
        let meta = old.base_meta("summary");
        out.push(old.profile("summary".into(), metrics, meta, warnings, String::new()));
    }
    out[0].source.size = size;
    Ok(out)
}

/// An old-format database being read: its tree and where it is.
struct Old<'a> {
    t: &'a OldTree,
    dir: &'a Path,
    dialect: String,
}

impl Old<'_> {
    fn base_meta(&self, label: &str) -> Vec<(String, String)> {
        vec![
            ("database".to_string(), self.dir.display().to_string()),
            ("profile".to_string(), label.to_string()),
            ("title".to_string(), self.t.title.clone()),
        ]
    }

    /// A column of values by nid, NaN at nodes without one.
    fn to_column(&self, vals: &HashMap<u32, f64>) -> Vec<f64> {
        let mut col = vec![f64::NAN; self.t.cct.len()];
        for (nid, v) in vals {
            if let Some(&n) = self.t.node_of.get(nid) {
                col[n as usize] = *v;
            }
        }
        col
    }

    fn profile(
        &self,
        label: String,
        metrics: MetricTable,
        meta: Vec<(String, String)>,
        warnings: Vec<String>,
        default_metric: String,
    ) -> Profile {
        Profile {
            call_graph: None,
            source: Source {
                path: None,
                format: Format::HpcToolkit,
                size: 0,
                gzip: false,
                label,
            },
            dialect: self.dialect.clone(),
            cct: self.t.cct.clone(),
            metrics,
            events: None,
            counters: None,
            meta,
            warnings,
            default_metric,
        }
    }

    /// The summary profile of the values in experiment.xml.
    fn summary(&self) -> Profile {
        let t = self.t;
        let mut metrics = MetricTable::new(t.cct.len());
        let mut names = Vec::new();
        for (mi, m) in t.summary_metrics.iter().enumerate() {
            let mut vals: HashMap<u32, f64> = HashMap::new();
            for &(nid, k, v) in &t.values {
                if k == mi {
                    vals.insert(nid, v);
                }
            }
            if vals.is_empty() {
                continue;
            }
            if m.exclusive() {
                subtract_statements(&mut vals, &t.statements);
            }
            let name = m.column();
            // A coefficient of variation has no unit.
            let unit = if name.contains(":cfvar") {
                ""
            } else {
                unit_of(&name)
            };
            metrics.set(&name, unit, self.to_column(&vals));
            names.push((name, m.inclusive()));
        }
        let mut meta = self.base_meta("summary");
        for (m, v) in &t.totals {
            meta.push((
                format!("total {}", t.summary_metrics[*m].column()),
                v.to_string(),
            ));
        }
        let warnings = t.warnings.clone();
        self.profile("summary".into(), metrics, meta, warnings, pick(&names))
    }

    /// The profile of one rank's (or thread's) `.metric-db` file.
    fn metric_db(&self, file: &str, data: &[u8], label: String) -> Result<Profile, String> {
        let t = self.t;
        let (nodes, nmetrics, values) = parse_metric_db(file, data)?;
        let mut metrics = MetricTable::new(t.cct.len());
        let mut names = Vec::new();
        let mut warnings = Vec::new();
        for m in &t.db_metrics {
            let Some(k) = m.db_id.filter(|&k| k < nmetrics) else {
                warnings.push(format!("{file}: metric {} is not in the file", m.name));
                continue;
            };
            let mut vals: HashMap<u32, f64> = HashMap::with_capacity(t.node_of.len());
            for &nid in t.node_of.keys() {
                if nid >= 1 && (nid as usize) <= nodes {
                    vals.insert(nid, values[(nid as usize - 1) * nmetrics + k]);
                }
            }
            if m.exclusive() {
                subtract_statements(&mut vals, &t.statements);
            }
            let name = m.column();
            metrics.set(&name, unit_of(&name), self.to_column(&vals));
            names.push((name, m.inclusive()));
        }
        if t.node_of.keys().any(|&nid| nid as usize > nodes) {
            warnings.push(format!(
                "{file}: holds {nodes} nodes, fewer than experiment.xml"
            ));
        }
        let mut meta = self.base_meta(&label);
        meta.push(("metric-db".into(), file.to_string()));
        Ok(self.profile(label, metrics, meta, warnings, pick(&names)))
    }
}

/// The default metric of (name, inclusive) columns: an exclusive CPU or real time, else
/// the first exclusive one, else the first.
fn pick(names: &[(String, bool)]) -> String {
    let exc: Vec<&String> = names
        .iter()
        .filter(|(_, inc)| !inc)
        .map(|(n, _)| n)
        .collect();
    exc.iter()
        .find(|n| {
            let u = n.to_ascii_uppercase();
            u.starts_with("CPUTIME") || u.starts_with("REALTIME")
        })
        .or(exc.first())
        .map(|s| s.to_string())
        .or_else(|| names.first().map(|n| n.0.clone()))
        .unwrap_or_default()
}
