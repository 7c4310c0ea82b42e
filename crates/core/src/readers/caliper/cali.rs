//! The .cali stream.

use super::*;

pub(super) const ATTR_NAME: u64 = 8;
pub(super) const ATTR_TYPE: u64 = 9;
pub(super) const ATTR_PROP: u64 = 10;

pub(super) const PROP_ASVALUE: u64 = 1;
pub(super) const PROP_SCOPE_MASK: u64 = 60;
pub(super) const PROP_SCOPE_PROCESS: u64 = 12;
pub(super) const PROP_SKIP_EVENTS: u64 = 64;
pub(super) const PROP_HIDDEN: u64 = 128;
pub(super) const PROP_NESTED: u64 = 256;
pub(super) const PROP_GLOBAL: u64 = 512;

pub(super) struct CNode {
    pub(super) attr: u64,
    pub(super) data: String,
    pub(super) parent: Option<u64>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct AttrInfo {
    pub(super) name: String,
    pub(super) prop: u64,
    pub(super) ty: String,
    pub(super) alias: Option<String>,
    pub(super) unit: Option<String>,
}

impl AttrInfo {
    pub(super) fn hidden(&self) -> bool {
        self.prop & PROP_HIDDEN != 0
    }
}

/// A record's hierarchy leaf (the deepest hierarchy node of its references) and its
/// visible (attribute, value) pairs.
pub(super) type Expanded<'a> = (Option<u64>, Vec<(u64, &'a str)>);

/// A `ctx` or `globals` record: referenced nodes and immediate (attribute, value) pairs.
pub(super) struct CaliRec {
    pub(super) line: u64,
    pub(super) refs: Vec<u64>,
    pub(super) attrs: Vec<u64>,
    pub(super) data: Vec<String>,
}

pub(super) struct CaliDb {
    pub(super) nodes: HashMap<u64, CNode>,
    pub(super) attrs: HashMap<u64, AttrInfo>,
    /// Hierarchy attributes: NESTED ones, or (Caliper 1.x, which had no NESTED property)
    /// the thread-scope reference attributes.
    pub(super) hier: HashSet<u64>,
}

impl CaliDb {
    pub(super) fn bootstrap() -> CaliDb {
        let mut nodes = HashMap::new();
        let types = [
            (0, "usr"),
            (1, "int"),
            (2, "uint"),
            (3, "string"),
            (4, "addr"),
            (5, "double"),
            (6, "bool"),
            (7, "type"),
            (11, "ptr"),
        ];
        for (id, t) in types {
            nodes.insert(
                id,
                CNode {
                    attr: ATTR_TYPE,
                    data: t.into(),
                    parent: None,
                },
            );
        }
        for (id, name, parent) in [
            (ATTR_NAME, "cali.attribute.name", 3),
            (ATTR_TYPE, "cali.attribute.type", 7),
            (ATTR_PROP, "cali.attribute.prop", 1),
        ] {
            nodes.insert(
                id,
                CNode {
                    attr: ATTR_NAME,
                    data: name.into(),
                    parent: Some(parent),
                },
            );
        }
        CaliDb {
            nodes,
            attrs: HashMap::new(),
            hier: HashSet::new(),
        }
    }

    /// Walks from `id` to the root, calling `f` on each node; bounded so a corrupt file
    /// with a parent cycle cannot loop forever.
    pub(super) fn walk<'a>(
        &'a self,
        id: u64,
        mut f: impl FnMut(u64, &'a CNode),
    ) -> Result<(), String> {
        let mut cur = Some(id);
        let mut steps = 0usize;
        while let Some(i) = cur {
            let Some(node) = self.nodes.get(&i) else {
                break;
            };
            steps += 1;
            if steps > self.nodes.len() + 1 {
                return Err(format!("the context tree has a cycle through node {i}"));
            }
            f(i, node);
            cur = node.parent;
        }
        Ok(())
    }

    /// Reads every attribute's name, type, properties, alias and unit from its node's
    /// ancestors, then picks the hierarchy attributes.
    pub(super) fn compute_attrs(&mut self) -> Result<(), String> {
        let by_name: HashMap<&str, u64> = self
            .nodes
            .iter()
            .filter(|(_, n)| n.attr == ATTR_NAME)
            .map(|(&id, n)| (n.data.as_str(), id))
            .collect();
        let alias_id = by_name.get("attribute.alias").copied();
        let unit_ids: Vec<u64> = ["attribute.unit", "time.unit"]
            .iter()
            .filter_map(|n| by_name.get(n).copied())
            .collect();
        let mut attrs = HashMap::new();
        for (&id, node) in &self.nodes {
            if node.attr != ATTR_NAME {
                continue;
            }
            let mut info = AttrInfo {
                name: node.data.clone(),
                ..Default::default()
            };
            let (mut prop, mut ty) = (None, None);
            if let Some(p) = node.parent {
                self.walk(p, |_, a| {
                    if a.attr == ATTR_PROP && prop.is_none() {
                        prop = Some(a.data.trim().parse::<u64>().unwrap_or(0));
                    } else if a.attr == ATTR_TYPE && ty.is_none() {
                        ty = Some(a.data.clone());
                    } else if Some(a.attr) == alias_id && info.alias.is_none() {
                        info.alias = Some(a.data.clone());
                    } else if unit_ids.contains(&a.attr) && info.unit.is_none() {
                        info.unit = Some(a.data.clone());
                    }
                })?;
            }
            info.prop = prop.unwrap_or(0);
            info.ty = ty.unwrap_or_default();
            attrs.insert(id, info);
        }
        self.attrs = attrs;
        let nested: HashSet<u64> = self
            .attrs
            .iter()
            .filter(|(_, a)| a.prop & PROP_NESTED != 0 && !a.hidden())
            .map(|(&id, _)| id)
            .collect();
        self.hier = if nested.is_empty() {
            self.attrs
                .iter()
                .filter(|(_, a)| {
                    a.prop & (PROP_ASVALUE | PROP_HIDDEN | PROP_GLOBAL | PROP_SKIP_EVENTS | 2) == 0
                        && a.prop & PROP_SCOPE_MASK != PROP_SCOPE_PROCESS
                        && !a.name.starts_with("cali.")
                        && a.ty != "type"
                })
                .map(|(&id, _)| id)
                .collect()
        } else {
            nested
        };
        Ok(())
    }

    pub(super) fn attr(&self, id: u64, line: u64) -> Result<&AttrInfo, String> {
        self.attrs
            .get(&id)
            .ok_or_else(|| format!("line {line}: {id} is not an attribute"))
    }

    /// The deepest hierarchy node of the last reference that has one, and every visible
    /// (attribute, value) pair: reference chains root first, then immediate values.
    pub(super) fn expand<'a>(&'a self, rec: &'a CaliRec) -> Result<Expanded<'a>, String> {
        let line = rec.line;
        let mut leaf = None;
        let mut entries: Vec<(u64, &str)> = Vec::new();
        for &r in &rec.refs {
            if !self.nodes.contains_key(&r) {
                return Err(format!("line {line}: reference to undefined node {r}"));
            }
            let start = entries.len();
            let mut chain_leaf = None;
            let mut bad = None;
            self.walk(r, |id, node| match self.attrs.get(&node.attr) {
                None => {
                    if bad.is_none() {
                        bad = Some((id, node.attr));
                    }
                }
                Some(a) if !a.hidden() => {
                    if chain_leaf.is_none() && self.hier.contains(&node.attr) {
                        chain_leaf = Some(id);
                    }
                    entries.push((node.attr, node.data.as_str()));
                }
                Some(_) => {}
            })
            .map_err(|e| format!("line {line}: {e}"))?;
            if let Some((id, a)) = bad {
                return Err(format!(
                    "line {line}: node {id} has attribute {a}, which is not an attribute"
                ));
            }
            entries[start..].reverse();
            if chain_leaf.is_some() {
                leaf = chain_leaf;
            }
        }
        for (&a, d) in rec.attrs.iter().zip(&rec.data) {
            if !self.attr(a, line)?.hidden() {
                entries.push((a, d.as_str()));
            }
        }
        Ok((leaf, entries))
    }

    /// The nearest hierarchy node above `id` (exclusive).
    pub(super) fn hier_parent(&self, id: u64) -> Result<Option<u64>, String> {
        let mut found = None;
        let mut first = true;
        self.walk(id, |i, n| {
            if first {
                first = false;
            } else if found.is_none() && self.hier.contains(&n.attr) {
                found = Some(i);
            }
        })?;
        Ok(found)
    }
}

/// Splits a record into `key=value=value` fields; `\` escapes the next character
/// (`\n` is a newline, as in Caliper's python reader).
pub(super) fn parse_fields(line: &[u8]) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut out = Vec::new();
    let mut entry: Vec<String> = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut i = 0;
    let text = |b: &mut Vec<u8>| String::from_utf8_lossy(&std::mem::take(b)).into_owned();
    while i < line.len() {
        match line[i] {
            b'\\' => {
                i += 1;
                match line.get(i) {
                    None => return Err("the record ends inside an escape ('\\')".into()),
                    Some(b'n') => cur.push(b'\n'),
                    Some(&b) => cur.push(b),
                }
            }
            b',' => {
                entry.push(text(&mut cur));
                let key = entry.remove(0);
                out.push((key, std::mem::take(&mut entry)));
            }
            b'=' => entry.push(text(&mut cur)),
            b => cur.push(b),
        }
        i += 1;
    }
    if !cur.is_empty() || !entry.is_empty() {
        entry.push(text(&mut cur));
        let key = entry.remove(0);
        out.push((key, entry));
    }
    Ok(out)
}

pub(super) fn field<'a>(fields: &'a [(String, Vec<String>)], key: &str) -> Option<&'a [String]> {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_slice())
}

pub(super) fn ids(
    fields: &[(String, Vec<String>)],
    key: &str,
    line: u64,
) -> Result<Vec<u64>, String> {
    field(fields, key)
        .unwrap_or(&[])
        .iter()
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| format!("line {line}: {key} value {v:?} is not a node id"))
        })
        .collect()
}

pub(super) fn one_id(
    fields: &[(String, Vec<String>)],
    key: &str,
    line: u64,
) -> Result<Option<u64>, String> {
    match field(fields, key) {
        None => Ok(None),
        Some([v, ..]) => v
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| format!("line {line}: {key}={v:?} is not a node id")),
        Some([]) => Err(format!("line {line}: {key} has no value")),
    }
}

/// Reads one record: up to a newline that is not escaped. Returns false at end of input.
pub(super) fn next_record(
    input: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    lines: &mut u64,
) -> Result<bool, String> {
    buf.clear();
    loop {
        let n = input
            .read_until(b'\n', buf)
            .map_err(|e| format!("line {}: cannot read: {e}", *lines + 1))?;
        if n == 0 {
            return Ok(!buf.is_empty());
        }
        if buf.last() != Some(&b'\n') {
            return Ok(true);
        }
        *lines += 1;
        // An odd run of backslashes before the newline escapes it: the record goes on.
        let slashes = buf[..buf.len() - 1]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if slashes % 2 == 0 {
            return Ok(true);
        }
    }
}

pub(super) fn read_cali(input: Box<dyn BufRead>, lines_skipped: u64) -> Result<Builder, String> {
    let (db, records, globals, warnings) = read_records(input, lines_skipped)?;
    let mut b = Builder {
        warnings,
        ..Default::default()
    };
    if let Some(g) = &globals {
        let (_, entries) = db.expand(g)?;
        for (a, v) in entries {
            push_meta(&mut b.meta, &db.attrs[&a].name, v);
        }
    }
    let major = major_version(&b.meta);
    let ids = Known::of(&db);
    let mut grove_of: HashMap<u64, u32> = HashMap::new();
    let mut col_of_attr: HashMap<u64, Option<usize>> = HashMap::new();
    let mut global_meta: Vec<(String, String)> = Vec::new();
    for rec in &records {
        let (leaf, entries) = db.expand(rec)?;
        if globals.is_none() {
            for &(a, v) in &entries {
                let info = &db.attrs[&a];
                let wanted = info.prop & PROP_GLOBAL != 0 || info.name == "cali.caliper.version";
                if wanted && !global_meta.iter().any(|(k, _)| *k == info.name) {
                    global_meta.push((info.name.clone(), v.to_string()));
                }
            }
        }
        let Some(leaf) = leaf else {
            continue;
        };
        let get = |id: Option<u64>| {
            let id = id?;
            entries
                .iter()
                .rev()
                .find(|(a, _)| *a == id)
                .map(|(_, v)| *v)
        };
        if get(ids.spot_channel).is_some_and(|c| c != "regionprofile") {
            continue;
        }
        let Some(node) = record_node(&db, &ids, &get, leaf, rec.line, &mut b, &mut grove_of)?
        else {
            continue;
        };
        let rank = get(ids.rank_attr).and_then(|v| {
            let v = v.trim();
            v.parse::<i64>().ok().or_else(|| {
                v.parse::<f64>()
                    .ok()
                    .filter(|f| f.fract() == 0.0)
                    .map(|f| f as i64)
            })
        });
        b.touch(rank);
        let values = RecordValues {
            db: &db,
            rank_attr: ids.rank_attr,
            major,
            node,
            rank,
        };
        values.add(&entries, &mut b, &mut col_of_attr);
    }
    if globals.is_none() {
        b.meta = global_meta;
    }
    Ok(b)
}

/// What the records of a .cali stream define: the node database (attributes computed),
/// the context records, the globals record and the warnings so far.
type CaliRecords = (CaliDb, Vec<CaliRec>, Option<CaliRec>, Vec<String>);

/// Reads every record of the stream into the node database and the record list.
fn read_records(mut input: Box<dyn BufRead>, lines_skipped: u64) -> Result<CaliRecords, String> {
    let mut db = CaliDb::bootstrap();
    let mut records: Vec<CaliRec> = Vec::new();
    let mut globals: Option<CaliRec> = None;
    let mut buf = Vec::new();
    let mut lines = lines_skipped;
    let mut warnings = Vec::new();
    let mut orphans = 0u64;
    let mut first = true;
    loop {
        let line = lines + 1;
        if !next_record(&mut *input, &mut buf, &mut lines)? {
            break;
        }
        let complete = buf.last() == Some(&b'\n');
        let mut rec: &[u8] = &buf;
        if first {
            rec = rec.strip_prefix(BOM).unwrap_or(rec);
            first = false;
        }
        let rec = rec.trim_ascii();
        if rec.is_empty() {
            continue;
        }
        let parsed = parse_fields(rec)
            .map_err(|e| format!("line {line}: {e}"))
            .and_then(|fields| {
                cali_record(
                    &fields,
                    line,
                    &mut db,
                    &mut records,
                    &mut globals,
                    &mut orphans,
                )
            });
        match parsed {
            Ok(()) if !complete => warnings.push(format!(
                "line {line}: the last record has no newline (truncated file?)"
            )),
            Ok(()) => {}
            Err(e) if !complete => {
                return Err(format!(
                    "{e} (the last record has no newline: truncated file?)"
                ))
            }
            Err(e) => return Err(e),
        }
    }
    if orphans > 0 {
        warnings.push(format!(
            "{orphans} context node(s) name an undefined parent and were read as roots"
        ));
    }
    db.compute_attrs()
        .map_err(|e| format!("line {lines} (end of the stream): {e}"))?;
    Ok((db, records, globals, warnings))
}

/// The attributes that place a record's values (the lowest id of each name, if any).
struct Known {
    spot_channel: Option<u64>,
    rank_attr: Option<u64>,
    cupti_kind: Option<u64>,
    cupti_kernel: Option<u64>,
    rocm_activity: Option<u64>,
    rocm_kernel: Option<u64>,
    rocm_api: Option<u64>,
    sampler_module: Option<u64>,
    sampler_function: Option<u64>,
}

impl Known {
    fn of(db: &CaliDb) -> Known {
        let id_of = |name: &str| {
            db.attrs
                .iter()
                .filter(|(_, a)| a.name == name)
                .map(|(&id, _)| id)
                .min()
        };
        Known {
            spot_channel: id_of("spot.channel"),
            rank_attr: id_of("mpi.rank"),
            cupti_kind: id_of("cupti.activity.kind"),
            cupti_kernel: id_of("cupti.kernel.name"),
            rocm_activity: id_of("rocm.activity"),
            rocm_kernel: id_of("rocm.kernel.name"),
            rocm_api: id_of("rocm.api"),
            sampler_module: id_of("module#cali.sampler.pc"),
            sampler_function: id_of("source.function#cali.sampler.pc"),
        }
    }
}

/// The tree node a record's values go to: its region path, under which a CUPTI or ROCm
/// activity or a sampled function adds a child; None for a record outside the tree.
fn record_node<'a>(
    db: &CaliDb,
    ids: &Known,
    get: &dyn Fn(Option<u64>) -> Option<&'a str>,
    leaf: u64,
    line: u64,
    b: &mut Builder,
    grove_of: &mut HashMap<u64, u32>,
) -> Result<Option<u32>, String> {
    let mut path_node = |cct: &mut Cct, id: Option<u64>| -> Result<Option<u32>, String> {
        match id {
            None => Ok(None),
            Some(id) => grove_node(db, cct, grove_of, id)
                .map(Some)
                .map_err(|e| format!("line {line}: {e}")),
        }
    };
    let node = if let Some(kind) = get(ids.cupti_kind) {
        let parent = path_node(&mut b.cct, Some(leaf))?;
        match kind {
            "kernel" => b.cct.child(
                parent,
                get(ids.cupti_kernel).unwrap_or("<unknown kernel>"),
                "kernel",
            ),
            "memcpy" => b.cct.child(parent, "memcpy", "memcpy"),
            other => b.cct.child(parent, other, other),
        }
    } else if let Some(act) = get(ids.rocm_activity) {
        if act == "KERNEL_DISPATCH_COMPLETE" {
            let parent = path_node(&mut b.cct, Some(leaf))?;
            b.cct.child(
                parent,
                get(ids.rocm_kernel).unwrap_or("<unknown kernel>"),
                "kernel",
            )
        } else if get(ids.rocm_api).is_some_and(|a| a.contains("hipMemcpy")) {
            // Hatchet drops the last region (the API call) for copies.
            let up = db
                .hier_parent(leaf)
                .map_err(|e| format!("line {line}: {e}"))?;
            let parent = path_node(&mut b.cct, up)?;
            b.cct.child(parent, act, "memcpy")
        } else {
            let parent = path_node(&mut b.cct, Some(leaf))?;
            b.cct.child(parent, act, act)
        }
    } else if let (Some(_), Some(f)) = (get(ids.sampler_module), get(ids.sampler_function)) {
        // Sampled PC: its function replaces the innermost region.
        let up = db
            .hier_parent(leaf)
            .map_err(|e| format!("line {line}: {e}"))?;
        let parent = path_node(&mut b.cct, up)?;
        b.cct.child(parent, f, "function")
    } else {
        return path_node(&mut b.cct, Some(leaf));
    };
    Ok(Some(node))
}

/// Where one record's values go: its node and rank.
struct RecordValues<'a> {
    db: &'a CaliDb,
    rank_attr: Option<u64>,
    major: Option<u32>,
    node: u32,
    rank: Option<i64>,
}

impl RecordValues<'_> {
    /// Adds the record's numeric as-value attributes (a metric column each, made on
    /// first sight) and its order value.
    fn add(
        &self,
        entries: &[(u64, &str)],
        b: &mut Builder,
        col_of_attr: &mut HashMap<u64, Option<usize>>,
    ) {
        let (db, node, rank) = (self.db, self.node, self.rank);
        // An attribute given twice in one record keeps its last value (a record is a map).
        let last: Vec<(u64, &str)> = entries
            .iter()
            .enumerate()
            .filter(|(i, (a, _))| !entries[i + 1..].iter().any(|(b, _)| b == a))
            .map(|(_, &e)| e)
            .collect();
        for &(a, v) in &last {
            let info = &db.attrs[&a];
            if info.prop & PROP_ASVALUE == 0 || Some(a) == self.rank_attr || db.hier.contains(&a) {
                continue;
            }
            let Ok(x) = v.trim().parse::<f64>() else {
                continue;
            };
            if is_order_column(&info.name, info.alias.as_deref()) {
                b.set_order(node, x);
                continue;
            }
            let col = match col_of_attr.get(&a) {
                Some(&c) => c,
                None => {
                    let numeric = matches!(info.ty.as_str(), "int" | "uint" | "double" | "");
                    let c = if numeric && info.name != "mpi.rank" {
                        let (name, inclusive) = display_name(&info.name, info.alias.as_deref());
                        let integral = matches!(info.ty.as_str(), "int" | "uint");
                        let unit = unit_of(&info.name, info.unit.as_deref(), self.major, integral);
                        let summable = summable(&info.name, &name);
                        Some(b.column(Col {
                            agg: agg_of(&info.name),
                            name,
                            unit,
                            inclusive,
                            summable,
                        }))
                    } else {
                        None
                    };
                    col_of_attr.insert(a, c);
                    c
                }
            };
            if let Some(c) = col {
                b.add(rank, node, c, x);
            }
        }
    }
}

pub(super) fn push_meta(meta: &mut Vec<(String, String)>, key: &str, value: &str) {
    match meta.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => {
            v.push(',');
            v.push_str(value);
        }
        None => meta.push((key.to_string(), value.to_string())),
    }
}

/// The grove node of a hierarchy context node: its hierarchy ancestors' names are the call
/// path (created on first use, merged by path like Hatchet's callpath tuples).
pub(super) fn grove_node(
    db: &CaliDb,
    cct: &mut Cct,
    memo: &mut HashMap<u64, u32>,
    id: u64,
) -> Result<u32, String> {
    if let Some(&g) = memo.get(&id) {
        return Ok(g);
    }
    let mut chain = Vec::new();
    let mut base = None;
    let mut cur = Some(id);
    let mut steps = 0usize;
    while let Some(i) = cur {
        if let Some(&g) = memo.get(&i) {
            base = Some(g);
            break;
        }
        let Some(node) = db.nodes.get(&i) else {
            break;
        };
        steps += 1;
        if steps > db.nodes.len() + 1 {
            return Err(format!("the context tree has a cycle through node {i}"));
        }
        if db.hier.contains(&node.attr) {
            chain.push(i);
        }
        cur = node.parent;
    }
    let mut parent = base;
    for &i in chain.iter().rev() {
        let name = db.nodes.get(&i).map(|n| n.data.as_str()).unwrap_or("");
        let g = cct.child(parent, name, "region");
        memo.insert(i, g);
        parent = Some(g);
    }
    parent.ok_or_else(|| format!("node {id} is not in the region hierarchy"))
}

pub(super) fn cali_record(
    fields: &[(String, Vec<String>)],
    line: u64,
    db: &mut CaliDb,
    records: &mut Vec<CaliRec>,
    globals: &mut Option<CaliRec>,
    orphans: &mut u64,
) -> Result<(), String> {
    let kind = match field(fields, "__rec") {
        Some([k, ..]) => k.as_str(),
        Some([]) => return Err(format!("line {line}: __rec has no value")),
        None => return Err(format!("line {line}: a record without __rec")),
    };
    match kind {
        "node" => {
            let id = one_id(fields, "id", line)?
                .ok_or_else(|| format!("line {line}: a node record without id"))?;
            let attr = one_id(fields, "attr", line)?
                .ok_or_else(|| format!("line {line}: a node record without attr"))?;
            let data = field(fields, "data")
                .and_then(|d| d.first())
                .cloned()
                .unwrap_or_default();
            let mut parent = one_id(fields, "parent", line)?;
            if let Some(p) = parent {
                if !db.nodes.contains_key(&p) || p == id {
                    *orphans += 1;
                    parent = None;
                }
            }
            db.nodes.insert(id, CNode { attr, data, parent });
        }
        "ctx" | "globals" => {
            let refs = ids(fields, "ref", line)?;
            let attrs = ids(fields, "attr", line)?;
            let data: Vec<String> = field(fields, "data").unwrap_or(&[]).to_vec();
            if attrs.len() != data.len() {
                return Err(format!(
                    "line {line}: {} attribute id(s) but {} data value(s)",
                    attrs.len(),
                    data.len()
                ));
            }
            for &r in &refs {
                if !db.nodes.contains_key(&r) {
                    return Err(format!("line {line}: reference to undefined node {r}"));
                }
            }
            for &a in &attrs {
                match db.nodes.get(&a) {
                    Some(n) if n.attr == ATTR_NAME => {}
                    _ => return Err(format!("line {line}: {a} is not an attribute")),
                }
            }
            let rec = CaliRec {
                line,
                refs,
                attrs,
                data,
            };
            if kind == "ctx" {
                records.push(rec);
            } else {
                *globals = Some(rec);
            }
        }
        _ => {} // other record kinds carry nothing grove shows
    }
    Ok(())
}
