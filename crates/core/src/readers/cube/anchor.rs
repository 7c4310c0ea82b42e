//! `anchor.xml`: the metric tree, the regions, the call tree (`cnode`s, each calling
//! one region) and the system tree (machines, nodes, … down to location groups, i.e.
//! processes, and locations, i.e. threads). Cube 4.0's older system tree spelling
//! (`machine`/`node`/`process`/`thread`) is read as the same.

use std::collections::HashMap;

use super::xml::Doc;

/// How a metric's rows are stored (the `type` attribute of `<metric>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Rows hold exclusive values; the inclusive value of a node sums its subtree.
    Exclusive,
    /// Rows hold inclusive values; the exclusive value subtracts the children's.
    Inclusive,
    /// Rows hold one value per call path that is both (no subtree aggregation).
    Simple,
}

#[derive(Debug, Clone)]
pub struct Metric {
    pub id: i64,
    pub uniq_name: String,
    pub disp_name: String,
    pub unit: String,
    pub dtype: String,
    /// None for derived metrics (`PREDERIVED_*`, `POSTDERIVED`): their values are a
    /// CubePL expression, not rows in the archive.
    pub kind: Option<Kind>,
    pub type_attr: String,
}

#[derive(Debug, Clone, Default)]
pub struct Region {
    pub name: String,
    pub mangled: String,
    pub module: String,
    pub begin: String,
    pub paradigm: String,
    pub role: String,
}

#[derive(Debug, Clone)]
pub struct Cnode {
    pub id: i64,
    pub region: i64,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub line: Option<String>,
    pub module: Option<String>,
    pub params: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub struct Location {
    pub id: i64,
    pub name: String,
    pub rank: String,
    /// `thread`, or another kind (Score-P's `accelerator` streams).
    pub kind: String,
    pub group_name: String,
    pub group_rank: String,
}

#[derive(Debug, Default)]
pub struct Anchor {
    pub attrs: Vec<(String, String)>,
    pub version: String,
    pub metrics: Vec<Metric>,
    pub regions: HashMap<i64, Region>,
    /// In document order (a depth-first walk); `roots` index into it.
    pub cnodes: Vec<Cnode>,
    pub roots: Vec<usize>,
    /// In system-tree order.
    pub locations: Vec<Location>,
    /// Names of the Cartesian topologies (`<topologies><cart name>`), which grove
    /// does not show.
    pub topologies: Vec<String>,
}

fn int(v: Option<&str>, what: &str) -> Result<i64, String> {
    let v = v.ok_or_else(|| format!("anchor.xml: a <{what}> without an id"))?;
    v.trim()
        .parse()
        .map_err(|_| format!("anchor.xml: <{what}> has id {v:?}, not a number"))
}

fn metrics(doc: &Doc, out: &mut Vec<Metric>) -> Result<(), String> {
    let Some(list) = doc.kid(0, "metrics") else {
        return Ok(());
    };
    // Metrics nest (a metric tree); each keeps its own rows.
    let mut stack: Vec<usize> = doc.kids(list, "metric").collect();
    stack.reverse();
    while let Some(m) = stack.pop() {
        let node = &doc.nodes[m];
        let type_attr = node.attr("type").unwrap_or("EXCLUSIVE").to_string();
        let kind = match type_attr.as_str() {
            "EXCLUSIVE" => Some(Kind::Exclusive),
            "INCLUSIVE" => Some(Kind::Inclusive),
            "SIMPLE" => Some(Kind::Simple),
            _ => None,
        };
        let uniq = doc.text_of(m, "uniq_name");
        let disp = doc.text_of(m, "disp_name");
        out.push(Metric {
            id: int(node.attr("id"), "metric")?,
            uniq_name: if uniq.is_empty() { disp } else { uniq }.to_string(),
            disp_name: disp.to_string(),
            unit: doc.text_of(m, "uom").to_string(),
            dtype: doc.text_of(m, "dtype").to_string(),
            kind,
            type_attr,
        });
        let kids: Vec<usize> = doc.kids(m, "metric").collect();
        stack.extend(kids.into_iter().rev());
    }
    Ok(())
}

fn regions(doc: &Doc, program: usize, out: &mut HashMap<i64, Region>) -> Result<(), String> {
    for r in doc.kids(program, "region") {
        let node = &doc.nodes[r];
        out.insert(
            int(node.attr("id"), "region")?,
            Region {
                name: doc.text_of(r, "name").to_string(),
                mangled: doc.text_of(r, "mangled_name").to_string(),
                module: node.attr("mod").unwrap_or("").to_string(),
                begin: node.attr("begin").unwrap_or("").to_string(),
                paradigm: doc.text_of(r, "paradigm").to_string(),
                role: doc.text_of(r, "role").to_string(),
            },
        );
    }
    Ok(())
}

fn cnodes(doc: &Doc, program: usize, a: &mut Anchor) -> Result<(), String> {
    // Early CUBE 3 files name a call site (`csiteId`), which names the region.
    let mut csites: HashMap<i64, (i64, Option<String>, Option<String>)> = HashMap::new();
    for cs in doc.kids(program, "csite") {
        let n = &doc.nodes[cs];
        csites.insert(
            int(n.attr("id"), "csite")?,
            (
                int(n.attr("callee"), "csite callee")?,
                n.attr("line").map(str::to_string),
                n.attr("mod").map(str::to_string),
            ),
        );
    }
    let mut stack: Vec<(usize, Option<usize>)> =
        doc.kids(program, "cnode").map(|c| (c, None)).collect();
    stack.reverse();
    while let Some((c, parent)) = stack.pop() {
        let node = &doc.nodes[c];
        let site = match node.attr("csiteId") {
            Some(_) if node.attr("calleeId").is_none() => {
                let id = int(node.attr("csiteId"), "cnode csiteId")?;
                Some(csites.get(&id).cloned().ok_or_else(|| {
                    format!("anchor.xml: cnode names call site {id}, which is not defined")
                })?)
            }
            _ => None,
        };
        let region = match &site {
            Some((callee, _, _)) => *callee,
            None => int(node.attr("calleeId"), "cnode calleeId")?,
        };
        let params = doc
            .kids(c, "parameter")
            .map(|p| {
                let p = &doc.nodes[p];
                (
                    p.attr("parkey").unwrap_or("").to_string(),
                    p.attr("parvalue").unwrap_or("").to_string(),
                )
            })
            .collect();
        let me = a.cnodes.len();
        a.cnodes.push(Cnode {
            id: int(node.attr("id"), "cnode")?,
            region,
            parent,
            children: Vec::new(),
            line: node
                .attr("line")
                .map(str::to_string)
                .or_else(|| site.as_ref().and_then(|s| s.1.clone())),
            module: node
                .attr("mod")
                .map(str::to_string)
                .or_else(|| site.as_ref().and_then(|s| s.2.clone())),
            params,
        });
        match parent {
            Some(p) => a.cnodes[p].children.push(me),
            None => a.roots.push(me),
        }
        let kids: Vec<usize> = doc.kids(c, "cnode").collect();
        stack.extend(kids.into_iter().rev().map(|k| (k, Some(me))));
    }
    Ok(())
}

/// The locations under `system`, in document order, with their process.
fn locations(doc: &Doc, system: usize, out: &mut Vec<Location>) -> Result<(), String> {
    // (element, enclosing location group's name and rank)
    let mut stack: Vec<(usize, String, String)> = vec![(system, String::new(), String::new())];
    while let Some((n, gname, grank)) = stack.pop() {
        let mut next = Vec::new();
        for &c in &doc.nodes[n].children {
            let kid = &doc.nodes[c];
            match kid.name.as_str() {
                "systemtreenode" | "machine" | "node" => {
                    next.push((c, gname.clone(), grank.clone()))
                }
                "locationgroup" | "process" => next.push((
                    c,
                    doc.text_of(c, "name").to_string(),
                    doc.text_of(c, "rank").to_string(),
                )),
                "location" | "thread" => out.push(Location {
                    id: int(kid.attr("Id").or(kid.attr("id")), &kid.name)?,
                    name: doc.text_of(c, "name").to_string(),
                    rank: doc.text_of(c, "rank").to_string(),
                    kind: doc.text_of(c, "type").to_string(),
                    group_name: gname.clone(),
                    group_rank: grank.clone(),
                }),
                _ => {}
            }
        }
        stack.extend(next.into_iter().rev());
    }
    Ok(())
}

pub fn parse(doc: &Doc) -> Result<Anchor, String> {
    let root = doc.root();
    if root.name != "cube" {
        return Err(format!(
            "anchor.xml: the root element is <{}>, not <cube>",
            root.name
        ));
    }
    let mut a = Anchor {
        version: root.attr("version").unwrap_or("").to_string(),
        ..Anchor::default()
    };
    for at in doc.kids(0, "attr") {
        let n = &doc.nodes[at];
        if let (Some(k), Some(v)) = (n.attr("key"), n.attr("value")) {
            a.attrs.push((k.to_string(), v.to_string()));
        }
    }
    metrics(doc, &mut a.metrics)?;
    let program = doc.kid(0, "program").ok_or("anchor.xml: no <program>")?;
    regions(doc, program, &mut a.regions)?;
    cnodes(doc, program, &mut a)?;
    let system = doc.kid(0, "system").ok_or("anchor.xml: no <system>")?;
    locations(doc, system, &mut a.locations)?;
    if let Some(t) = doc.kid(system, "topologies") {
        for c in doc.kids(t, "cart") {
            let name = doc.nodes[c].attr("name").unwrap_or("unnamed");
            a.topologies.push(name.to_string());
        }
    }
    Ok(a)
}

/// Row order of a metric's data: the cnodes (indices into `Anchor::cnodes`) in the
/// enumeration cubelib's writer uses for the metric's kind. Exclusive metrics: depth
/// first (pre-order). Inclusive metrics: each root, then for every node in depth-first
/// order the whole list of its children (so a parent's children sit side by side).
/// Simple metrics: by cnode id.
pub fn enumeration(a: &Anchor, kind: Kind) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.cnodes.len());
    match kind {
        Kind::Exclusive => {
            let mut stack: Vec<usize> = a.roots.iter().rev().copied().collect();
            while let Some(n) = stack.pop() {
                out.push(n);
                stack.extend(a.cnodes[n].children.iter().rev());
            }
        }
        Kind::Inclusive => {
            for &root in &a.roots {
                out.push(root);
                let mut stack = vec![root];
                while let Some(n) = stack.pop() {
                    out.extend(&a.cnodes[n].children);
                    stack.extend(a.cnodes[n].children.iter().rev());
                }
            }
        }
        Kind::Simple => {
            out.extend(0..a.cnodes.len());
            out.sort_by_key(|&n| a.cnodes[n].id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"<?xml version="1.0"?><cube version="4.4">
      <attr key="Creator" value="test"/>
      <metrics><metric id="0" type="INCLUSIVE"><uniq_name>time</uniq_name><dtype>DOUBLE</dtype><uom>sec</uom>
        <metric id="1" type="POSTDERIVED"><disp_name>d</disp_name></metric></metric></metrics>
      <program><region id="7" mod="a.c" begin="3"><name>main</name></region>
        <region id="8"><name>f</name></region>
        <cnode id="0" calleeId="7"><cnode id="1" calleeId="8"><cnode id="2" calleeId="8"/></cnode><cnode id="3" calleeId="8"/></cnode>
      </program>
      <system><systemtreenode Id="0"><locationgroup Id="0"><name>MPI Rank 0</name><rank>0</rank>
        <location Id="0"><name>Master thread</name><rank>0</rank><type>thread</type></location>
        <location Id="1"><name>t1</name><rank>1</rank><type>thread</type></location></locationgroup></systemtreenode></system></cube>"#;

    #[test]
    fn reads_the_trees() {
        let a = parse(&super::super::xml::parse(DOC.as_bytes()).unwrap()).unwrap();
        assert_eq!(a.metrics.len(), 2);
        assert_eq!(a.metrics[1].kind, None);
        assert_eq!(a.metrics[1].uniq_name, "d");
        assert_eq!(a.cnodes.len(), 4);
        assert_eq!(a.cnodes[1].children, vec![2]);
        assert_eq!(a.locations.len(), 2);
        assert_eq!(a.locations[1].group_rank, "0");
        assert_eq!(enumeration(&a, Kind::Exclusive), vec![0, 1, 2, 3]);
        // Root, its children (1, 3), then 1's children (2).
        assert_eq!(enumeration(&a, Kind::Inclusive), vec![0, 1, 3, 2]);
    }
}
