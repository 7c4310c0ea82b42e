//! JSON: json-split and cali-json.

use super::*;

#[derive(Debug, Clone)]
pub(super) enum Cell {
    Null,
    Num(f64),
    Str(String),
}

impl Cell {
    pub(super) fn num(&self) -> Option<f64> {
        match self {
            Cell::Num(v) => Some(*v),
            Cell::Str(s) => s.trim().parse().ok(),
            Cell::Null => None,
        }
    }

    pub(super) fn index(&self) -> Option<usize> {
        match self {
            Cell::Num(v) if *v >= 0.0 && v.fract() == 0.0 && *v < 1e15 => Some(*v as usize),
            _ => None,
        }
    }
}

pub(super) fn read_cell<R: Read>(
    r: &mut JsonReader<R>,
    text: &mut Vec<u8>,
) -> Result<Cell, JsonError> {
    Ok(match r.peek_kind()? {
        Kind::Num => {
            r.read_num(text)?;
            Cell::Num(parse_f64(text).ok_or_else(|| {
                r.error(format!(
                    "invalid number {:?}",
                    String::from_utf8_lossy(text)
                ))
            })?)
        }
        Kind::Str => {
            r.read_str(text)?;
            Cell::Str(String::from_utf8_lossy(text).into_owned())
        }
        Kind::True => {
            r.skip_value()?;
            Cell::Num(1.0)
        }
        Kind::False => {
            r.skip_value()?;
            Cell::Num(0.0)
        }
        Kind::Null => {
            r.skip_value()?;
            Cell::Null
        }
        Kind::Object | Kind::Array => {
            let mut raw = Vec::new();
            r.capture_value(&mut raw)?;
            Cell::Str(String::from_utf8_lossy(&raw).trim().to_string())
        }
    })
}

/// A run-metadata value as text: strings unquoted, numbers and literals as written,
/// objects and lists as their JSON text.
pub(super) fn meta_value<R: Read>(
    r: &mut JsonReader<R>,
    text: &mut Vec<u8>,
) -> Result<String, JsonError> {
    Ok(match r.peek_kind()? {
        Kind::Object | Kind::Array => {
            let mut raw = Vec::new();
            r.capture_value(&mut raw)?;
            String::from_utf8_lossy(&raw).trim().to_string()
        }
        Kind::True => {
            r.skip_value()?;
            "true".into()
        }
        Kind::False => {
            r.skip_value()?;
            "false".into()
        }
        Kind::Null => {
            r.skip_value()?;
            "null".into()
        }
        Kind::Str | Kind::Num => {
            r.read_scalar(text)?;
            String::from_utf8_lossy(text).into_owned()
        }
    })
}

#[derive(Default, Clone)]
pub(super) struct ColMeta {
    pub(super) is_value: Option<bool>,
    pub(super) alias: Option<String>,
    pub(super) unit: Option<String>,
}

pub(super) struct JNode {
    pub(super) offset: u64,
    pub(super) label: String,
    pub(super) column: String,
    pub(super) parent: Option<f64>,
}

pub(super) struct Split {
    pub(super) rows: Vec<(u64, Vec<Cell>)>,
    pub(super) columns: Vec<String>,
    pub(super) colmeta: Option<Vec<ColMeta>>,
    pub(super) nodes: Vec<JNode>,
    pub(super) meta: Vec<(String, String)>,
    pub(super) end: String,
}

pub(super) fn parse_split<R: Read>(mut r: JsonReader<R>) -> Result<Split, JsonError> {
    r.skip_bom();
    r.begin_object()?;
    let (mut key, mut text) = (Vec::new(), Vec::new());
    let mut rows = None;
    let mut columns = None;
    let mut colmeta = None;
    let mut nodes = None;
    let mut meta = Vec::new();
    let mut first = true;
    while r.next_key(first, &mut key)? {
        first = false;
        match &key[..] {
            b"data" => {
                if r.peek_kind()? != Kind::Array {
                    return Err(r.error("\"data\" must be a list of rows"));
                }
                r.begin_array()?;
                let mut out = Vec::new();
                let mut fe = true;
                while r.next_element(fe)? {
                    fe = false;
                    if r.peek_kind()? != Kind::Array {
                        return Err(r.error("a data row must be a list"));
                    }
                    let offset = r.offset();
                    r.begin_array()?;
                    let mut cells = Vec::new();
                    let mut fc = true;
                    while r.next_element(fc)? {
                        fc = false;
                        cells.push(read_cell(&mut r, &mut text)?);
                    }
                    out.push((offset, cells));
                }
                rows = Some(out);
            }
            b"columns" => {
                if r.peek_kind()? != Kind::Array {
                    return Err(r.error("\"columns\" must be a list of names"));
                }
                r.begin_array()?;
                let mut out = Vec::new();
                let mut fe = true;
                while r.next_element(fe)? {
                    fe = false;
                    if r.peek_kind()? != Kind::Str {
                        return Err(r.error("a column name must be a string"));
                    }
                    r.read_str(&mut text)?;
                    out.push(String::from_utf8_lossy(&text).into_owned());
                }
                columns = Some(out);
            }
            b"column_metadata" => {
                if r.peek_kind()? != Kind::Array {
                    return Err(r.error("\"column_metadata\" must be a list"));
                }
                r.begin_array()?;
                let mut out = Vec::new();
                let mut fe = true;
                while r.next_element(fe)? {
                    fe = false;
                    let v = r.read_value()?;
                    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
                    out.push(ColMeta {
                        is_value: v
                            .get("is_value")
                            .and_then(|x| x.as_bool().or_else(|| x.as_str().map(|s| s == "true"))),
                        alias: s("attribute.alias"),
                        unit: s("attribute.unit"),
                    });
                }
                colmeta = Some(out);
            }
            b"nodes" => {
                if r.peek_kind()? != Kind::Array {
                    return Err(r.error("\"nodes\" must be a list"));
                }
                r.begin_array()?;
                let mut out = Vec::new();
                let mut fe = true;
                while r.next_element(fe)? {
                    fe = false;
                    if r.peek_kind()? != Kind::Object {
                        return Err(r.error("a node must be an object"));
                    }
                    let offset = r.offset();
                    r.begin_object()?;
                    let mut node = JNode {
                        offset,
                        label: String::new(),
                        column: String::new(),
                        parent: None,
                    };
                    let mut fk = true;
                    while r.next_key(fk, &mut key)? {
                        fk = false;
                        match &key[..] {
                            b"label" | b"column" => {
                                r.read_scalar(&mut text)?;
                                let s = String::from_utf8_lossy(&text).into_owned();
                                if key == b"label" {
                                    node.label = s;
                                } else {
                                    node.column = s;
                                }
                            }
                            b"parent" => {
                                let k = r.read_scalar(&mut text)?;
                                node.parent = match k {
                                    Kind::Num | Kind::Str => {
                                        Some(parse_f64(&text).ok_or_else(|| {
                                            r.error("a node's parent must be a node index")
                                        })?)
                                    }
                                    _ => None,
                                };
                            }
                            _ => r.skip_value()?,
                        }
                    }
                    out.push(node);
                }
                nodes = Some(out);
            }
            _ => {
                let k = String::from_utf8_lossy(&key).into_owned();
                meta.push((k, meta_value(&mut r, &mut text)?));
            }
        }
    }
    if !r.at_eof() {
        return Err(r.error("unexpected data after the top-level object"));
    }
    let at = r.error("");
    let end = format!(
        "line {}, column {} (byte {})",
        at.line, at.column, at.offset
    );
    let missing = |what: &str| r.error(format!("json-split without \"{what}\""));
    Ok(Split {
        rows: rows.ok_or_else(|| missing("data"))?,
        columns: columns.ok_or_else(|| missing("columns"))?,
        colmeta,
        nodes: nodes.ok_or_else(|| missing("nodes"))?,
        meta,
        end,
    })
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Role {
    Hier,
    Rank,
    Order,
    Metric(usize),
    Attr(String),
    SourceLoc,
    Ignore,
}

/// `file:line` of a `sourceloc#cali.sampler.pc` label.
pub(super) fn split_sourceloc(label: &str) -> (String, String) {
    match label.rsplit_once(':') {
        Some((f, l)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
            (f.to_string(), l.to_string())
        }
        _ => (label.to_string(), String::new()),
    }
}

pub(super) fn read_json_split(input: Box<dyn BufRead>) -> Result<Builder, String> {
    let s = parse_split(JsonReader::new(input)).map_err(|e| e.to_string())?;
    let ncols = s.columns.len();
    let colmeta = column_metadata(&s)?;
    let node_columns: HashSet<&str> = s.nodes.iter().map(|n| n.column.as_str()).collect();
    let is_value = |j: usize| {
        colmeta[j]
            .is_value
            .unwrap_or(!node_columns.contains(s.columns[j].as_str()))
    };
    let hier = hierarchy_column(&s, &is_value)?;
    let mut b = Builder {
        meta: s.meta.clone(),
        ..Default::default()
    };
    let tree_of = split_tree(&s, hier, &mut b)?;
    let roles = column_roles(&s, &colmeta, hier, &is_value, &mut b);
    // Rows: (row, tree node); rows whose hierarchy cell is null are not tree rows.
    let mut tree_rows: Vec<(usize, u32)> = Vec::new();
    let hier_name = &s.columns[hier];
    for (ri, (offset, cells)) in s.rows.iter().enumerate() {
        if cells.len() != ncols {
            return Err(format!(
                "byte {offset}: data row {ri} has {} cells for {ncols} columns",
                cells.len()
            ));
        }
        if matches!(cells[hier], Cell::Null) {
            continue;
        }
        let k = node_at(&s, &cells[hier], ri, *offset, "hierarchy")?;
        let node = tree_of[k].ok_or_else(|| {
            format!("byte {offset}: data row {ri}: node {k} is not a {hier_name:?} node")
        })?;
        tree_rows.push((ri, node));
    }
    let mut row_node: Vec<u32> = tree_rows.iter().map(|&(_, n)| n).collect();
    if let Some(sl) = roles.iter().position(|r| *r == Role::SourceLoc) {
        source_locations(&s, sl, &tree_rows, &mut row_node, &mut b)?;
    }
    for (i, &(ri, _)) in tree_rows.iter().enumerate() {
        add_row(&s, &roles, &s.rows[ri].1, row_node[i], &mut b);
    }
    Ok(b)
}

/// The `column_metadata` entries, one per column (defaults when there are none).
fn column_metadata(s: &Split) -> Result<Vec<ColMeta>, String> {
    let ncols = s.columns.len();
    match &s.colmeta {
        Some(m) if m.len() == ncols => Ok(m.clone()),
        Some(m) => Err(format!(
            "{}: {} columns but {} column_metadata entries",
            s.end,
            ncols,
            m.len()
        )),
        None => Ok(vec![ColMeta::default(); ncols]),
    }
}

/// The hierarchy: call paths, else region paths, else the first non-value column whose
/// nodes have parents.
fn hierarchy_column(s: &Split, is_value: &dyn Fn(usize) -> bool) -> Result<usize, String> {
    if let Some(j) = s.columns.iter().position(|c| c == CALLPATH) {
        Ok(j)
    } else if let Some(j) = s.columns.iter().position(|c| c == "path") {
        Ok(j)
    } else if let Some(j) = (0..s.columns.len()).find(|&j| {
        !is_value(j)
            && s.nodes
                .iter()
                .any(|n| n.column == s.columns[j] && n.parent.is_some())
    }) {
        Ok(j)
    } else {
        Err(format!(
            "{}: no hierarchy column (\"path\" or \"{CALLPATH}\")",
            s.end
        ))
    }
}

/// The tree: every node of the hierarchy column, parents first; the tree node of each
/// of `s.nodes` (None for the other columns' nodes).
fn split_tree(s: &Split, hier: usize, b: &mut Builder) -> Result<Vec<Option<u32>>, String> {
    let hier_name = &s.columns[hier];
    let kind = if hier_name == CALLPATH {
        "function"
    } else {
        "region"
    };
    let mut tree_of: Vec<Option<u32>> = vec![None; s.nodes.len()];
    let mut unknown = 0usize;
    for (i, n) in s.nodes.iter().enumerate() {
        if n.column != *hier_name {
            continue;
        }
        let parent = match n.parent {
            None => None,
            Some(p) => {
                let pi = Cell::Num(p).index().filter(|&pi| pi < i);
                match pi.and_then(|pi| tree_of[pi]) {
                    Some(g) => Some(g),
                    None => {
                        return Err(format!(
                            "byte {}: nodes[{i}] has parent {p}, which is not an earlier \
                             node of column {hier_name:?}",
                            n.offset
                        ))
                    }
                }
            }
        };
        let label = if n.label.is_empty() {
            unknown += 1;
            format!("UNKNOWN {}", unknown - 1)
        } else {
            n.label.clone()
        };
        tree_of[i] = Some(b.cct.add_node(parent, Frame::new(&label, kind)));
    }
    Ok(tree_of)
}

/// The node a cell of data row `row` refers to, or the one-line error.
fn node_at(s: &Split, cell: &Cell, row: usize, offset: u64, what: &str) -> Result<usize, String> {
    cell.index().filter(|&k| k < s.nodes.len()).ok_or_else(|| {
        let shown = match cell {
            Cell::Null => "null".to_string(),
            Cell::Num(v) => v.to_string(),
            Cell::Str(t) => format!("{t:?}"),
        };
        format!(
            "byte {offset}: data row {row}: the {what} cell {shown} is not an index into \
             the {} nodes",
            s.nodes.len()
        )
    })
}

/// What each column is; the metric columns are added to `b`.
fn column_roles(
    s: &Split,
    colmeta: &[ColMeta],
    hier: usize,
    is_value: &dyn Fn(usize) -> bool,
    b: &mut Builder,
) -> Vec<Role> {
    let ncols = s.columns.len();
    // Whether each column holds integers only (old Caliper wrote microseconds as integers).
    let integral: Vec<bool> = (0..ncols)
        .map(|j| {
            s.rows.iter().all(|(_, cells)| match cells.get(j) {
                Some(Cell::Num(v)) => v.fract() == 0.0,
                _ => true,
            })
        })
        .collect();
    let major = major_version(&s.meta);
    let mut roles = Vec::with_capacity(ncols);
    for j in 0..ncols {
        let name = s.columns[j].as_str();
        let m = &colmeta[j];
        let role = if j == hier {
            Role::Hier
        } else if name == "mpi.rank" {
            Role::Rank
        } else if is_value(j) {
            if is_order_column(name, m.alias.as_deref()) {
                Role::Order
            } else if name.is_empty() {
                Role::Ignore
            } else {
                let (display, inclusive) = display_name(name, None);
                let col = Col {
                    agg: agg_of(name),
                    unit: unit_of(name, m.unit.as_deref(), major, integral[j]),
                    summable: summable(name, &display),
                    name: display,
                    inclusive,
                };
                Role::Metric(b.column(col))
            }
        } else {
            match name {
                "module#cali.sampler.pc" => Role::Attr("module".into()),
                "sourceloc#cali.sampler.pc" => Role::SourceLoc,
                "path" => Role::Ignore, // the secondary hierarchy next to call paths
                other => Role::Attr(other.to_string()),
            }
        };
        roles.push(role);
    }
    roles
}

/// Sampled source locations (column `sl`): a node with several lines gets one statement
/// child per line (Hatchet's reader), and its rows move to those children; a node with
/// one keeps file and line as attributes.
fn source_locations(
    s: &Split,
    sl: usize,
    tree_rows: &[(usize, u32)],
    row_node: &mut [u32],
    b: &mut Builder,
) -> Result<(), String> {
    let mut locs: BTreeMap<u32, Vec<(String, String)>> = BTreeMap::new();
    let mut row_loc = Vec::with_capacity(tree_rows.len());
    for &(ri, node) in tree_rows {
        let (offset, cells) = &s.rows[ri];
        let loc = match &cells[sl] {
            Cell::Null => None,
            c => {
                let k = node_at(s, c, ri, *offset, "source location")?;
                Some(split_sourceloc(&s.nodes[k].label))
            }
        };
        if let Some(l) = &loc {
            let v = locs.entry(node).or_default();
            if !v.contains(l) {
                v.push(l.clone());
            }
        }
        row_loc.push(loc);
    }
    let mut child_of: HashMap<(u32, (String, String)), u32> = HashMap::new();
    for (node, mut ls) in locs {
        if ls.len() == 1 {
            let (file, line) = &ls[0];
            let f = b.cct.frame_mut(node);
            f.set_attr("file", file);
            f.set_attr("line", line);
            continue;
        }
        ls.sort_by(|a, b| {
            let num = |s: &str| s.parse::<u64>().unwrap_or(u64::MAX);
            num(&a.1).cmp(&num(&b.1)).then_with(|| a.cmp(b))
        });
        for (file, line) in ls {
            let base = file.rsplit('/').next().unwrap_or(&file);
            let mut frame = Frame::new(&format!("{base}:{line}"), "statement");
            frame.set_attr("file", &file);
            frame.set_attr("line", &line);
            let c = b.cct.add_node(Some(node), frame);
            child_of.insert((node, (file, line)), c);
        }
    }
    for (i, loc) in row_loc.into_iter().enumerate() {
        if let Some(l) = loc {
            if let Some(&c) = child_of.get(&(row_node[i], l)) {
                row_node[i] = c;
            }
        }
    }
    Ok(())
}

/// One data row's values (metrics, order) and attributes on its tree node.
fn add_row(s: &Split, roles: &[Role], cells: &[Cell], node: u32, b: &mut Builder) {
    let rank = roles
        .iter()
        .position(|r| *r == Role::Rank)
        .and_then(|j| cells[j].num())
        .filter(|v| v.fract() == 0.0)
        .map(|v| v as i64);
    b.touch(rank);
    for (j, role) in roles.iter().enumerate() {
        match role {
            Role::Metric(c) => {
                if let Some(v) = cells[j].num() {
                    b.add(rank, node, *c, v);
                }
            }
            Role::Order => {
                if let Some(v) = cells[j].num() {
                    b.set_order(node, v);
                }
            }
            Role::Attr(name) => {
                let label = match &cells[j] {
                    Cell::Null => continue,
                    Cell::Str(s) => s.clone(),
                    c => match c.index().and_then(|k| s.nodes.get(k)) {
                        Some(n) => n.label.clone(),
                        None => continue,
                    },
                };
                let f = b.cct.frame_mut(node);
                if f.attr(name).is_none() {
                    f.set_attr(name, &label);
                }
            }
            _ => {}
        }
    }
}

pub(super) fn read_cali_json(input: Box<dyn BufRead>) -> Result<Builder, String> {
    let mut r = JsonReader::new(input);
    let e = |e: JsonError| e.to_string();
    r.skip_bom();
    r.begin_array().map_err(e)?;
    let mut keys: Vec<String> = Vec::new();
    let mut key_ids: HashMap<String, usize> = HashMap::new();
    let mut records: Vec<Vec<(usize, Cell)>> = Vec::new();
    let (mut key, mut text) = (Vec::new(), Vec::new());
    let mut first = true;
    while r.next_element(first).map_err(e)? {
        first = false;
        if r.peek_kind().map_err(e)? != Kind::Object {
            return Err(r.error("a cali-json record must be an object").to_string());
        }
        r.begin_object().map_err(e)?;
        let mut rec = Vec::new();
        let mut fk = true;
        while r.next_key(fk, &mut key).map_err(e)? {
            fk = false;
            let k = String::from_utf8_lossy(&key).into_owned();
            let id = match key_ids.get(&k) {
                Some(&i) => i,
                None => {
                    key_ids.insert(k.clone(), keys.len());
                    keys.push(k);
                    keys.len() - 1
                }
            };
            rec.push((id, read_cell(&mut r, &mut text).map_err(e)?));
        }
        records.push(rec);
    }
    if !r.at_eof() {
        return Err(r
            .error("unexpected data after the list of records")
            .to_string());
    }
    let Some(hier) = HIERARCHY_KEYS.iter().find_map(|h| {
        let id = *key_ids.get(*h)?;
        records
            .iter()
            .any(|rec| {
                rec.iter()
                    .any(|(k, c)| *k == id && matches!(c, Cell::Str(_)))
            })
            .then_some(id)
    }) else {
        return Err(r
            .error(format!(
                "no record has a hierarchy attribute ({})",
                HIERARCHY_KEYS.join(", ")
            ))
            .to_string());
    };
    let kind = if keys[hier] == CALLPATH || keys[hier] == "function" {
        "function"
    } else {
        "region"
    };
    let mut b = Builder::default();
    let mut roles: Vec<Option<Role>> = vec![None; keys.len()];
    for (i, k) in keys.iter().enumerate() {
        roles[i] = Some(if i == hier {
            Role::Hier
        } else if k == "mpi.rank" {
            Role::Rank
        } else if is_order_column(k, None) {
            Role::Order
        } else if HIERARCHY_KEYS.contains(&k.as_str()) {
            Role::Ignore
        } else {
            Role::Attr(k.clone()) // decided per value below
        });
    }
    let mut integral = vec![true; keys.len()];
    for (k, c) in records.iter().flatten() {
        if matches!(c, Cell::Num(v) if v.fract() != 0.0) {
            integral[*k] = false;
        }
    }
    let mut col_of_key: HashMap<usize, usize> = HashMap::new();
    for rec in &records {
        let Some(Cell::Str(p)) = rec.iter().find(|(k, _)| *k == hier).map(|(_, c)| c) else {
            continue;
        };
        // "main/foo", or a list of names when the writer kept the nested values apart.
        let segs: Vec<String> = match crate::json::from_slice_as::<Vec<String>>(p.as_bytes()) {
            Ok(list) if p.starts_with('[') => list,
            _ => p.split('/').map(str::to_string).collect(),
        };
        let mut node = None;
        for seg in segs.iter().filter(|s| !s.is_empty()) {
            node = Some(b.cct.child(node, seg, kind));
        }
        let Some(node) = node else {
            continue;
        };
        let rank = rec
            .iter()
            .find(|(k, _)| roles[*k] == Some(Role::Rank))
            .and_then(|(_, c)| c.num())
            .filter(|v| v.fract() == 0.0)
            .map(|v| v as i64);
        b.touch(rank);
        for (k, c) in rec {
            match &roles[*k] {
                Some(Role::Order) => {
                    if let Some(v) = c.num() {
                        b.set_order(node, v);
                    }
                }
                Some(Role::Attr(name)) => {
                    let v = match c {
                        Cell::Num(v) => Some(*v),
                        Cell::Str(s) if metric_like(name) => s.trim().parse::<f64>().ok(),
                        _ => None,
                    };
                    let Some(v) = v else {
                        continue;
                    };
                    let col = *col_of_key.entry(*k).or_insert_with(|| {
                        let (display, inclusive) = display_name(name, None);
                        b.column(Col {
                            agg: agg_of(name),
                            unit: unit_of(name, None, None, integral[*k]),
                            summable: summable(name, &display),
                            name: display,
                            inclusive,
                        })
                    });
                    b.add(rank, node, col, v);
                }
                _ => {}
            }
        }
    }
    Ok(b)
}
