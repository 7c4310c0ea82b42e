//! PyTorch Execution Trace (ET) JSON: what `torch.profiler.ExecutionTraceObserver`
//! writes, one node per operator or record-function scope with its schema and its
//! inputs and outputs (values, shapes, types), but no durations.
//!
//! Two layouts, told apart by the node, not the version string (versions keep coming):
//! - schema 1.0.1 (PyTorch 2.0/2.1): `parent`, `rf_id`, `op_schema`, `tid` and flat
//!   `inputs`, `input_shapes`, `input_types` (and the `output_*` three) on the node;
//! - schema 1.0.2-chakra.0.0.4 and later (Chakra's JSON): the parent is `ctrl_deps`,
//!   scalar fields move into `attrs` (a list of `{name, type, value}`), and `inputs` /
//!   `outputs` become objects with `values`, `shapes`, `types` and (1.1.1) `strides`.
//!
//! Opened alone, an ET is its operator tree: one node per ET node (identity kept, as in
//! a Hatchet literal, so each keeps its own shapes), children in id order as
//! et_replay sorts them. Given with a Kineto trace (`--et`), `attach` puts the same
//! fields on the trace's CPU ops.

pub mod attach;

use std::io::BufRead;

use serde_json::Value;

use crate::model::{Cct, Frame, MetricTable, Profile, Source};

/// One ET node, whichever layout it came in.
#[derive(Debug, Clone, Default)]
pub struct EtNode {
    pub id: i64,
    pub parent: Option<i64>,
    pub name: String,
    pub rf_id: Option<i64>,
    pub tid: Option<i64>,
    pub op_schema: String,
    pub inputs: Io,
    pub outputs: Io,
}

/// Inputs or outputs of one node: parallel lists, as the ET writes them.
#[derive(Debug, Clone, Default)]
pub struct Io {
    pub values: Vec<Value>,
    pub shapes: Vec<Value>,
    pub types: Vec<String>,
    pub strides: Vec<Value>,
}

#[derive(Debug, Default)]
pub struct ExecutionTrace {
    pub schema: String,
    pub pid: Option<i64>,
    pub nodes: Vec<EtNode>,
    pub warnings: Vec<String>,
}

/// The record-function scopes the observer adds for the process and each thread: they
/// have an rf_id of their own that no trace event carries (HTA leaves them out of the
/// overlap check too).
pub fn is_observer_root(name: &str) -> bool {
    name.contains("execution_trace|thread") || name.contains("execution_trace|process")
}

/// Whether a JSON head is an ET: an object with `schema` and `nodes` and none of the
/// `.cpuprofile` keys (which also has `nodes`).
pub fn claims(head: &[u8]) -> bool {
    let text = head.trim_ascii_start();
    if !text.starts_with(b"{") {
        return false;
    }
    let (keys, _) = super::describe::json_keys(text);
    let has = |k: &str| keys.iter().any(|x| x == k);
    has("schema") && has("nodes") && !has("samples") && !has("timeDeltas")
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn list(v: Option<&Value>) -> Vec<Value> {
    match v {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    list(v).iter().map(text).collect()
}

/// One node of either layout; `None` when it has no id.
fn node(x: &Value) -> Option<EtNode> {
    let o = x.as_object()?;
    let id = int(o.get("id")?)?;
    let mut n = EtNode {
        id,
        name: o.get("name").map(text).unwrap_or_default(),
        ..EtNode::default()
    };
    // Chakra layout: attrs list and inputs/outputs objects.
    if let Some(Value::Array(attrs)) = o.get("attrs") {
        for a in attrs {
            let (Some(name), Some(value)) = (a.get("name").and_then(Value::as_str), a.get("value"))
            else {
                continue;
            };
            match name {
                "rf_id" => n.rf_id = int(value),
                "tid" => n.tid = int(value),
                "op_schema" => n.op_schema = text(value),
                _ => {}
            }
        }
    }
    n.parent = o.get("ctrl_deps").or_else(|| o.get("parent")).and_then(int);
    if let Some(v) = o.get("rf_id").and_then(int) {
        n.rf_id = Some(v);
    }
    if let Some(v) = o.get("tid").and_then(int) {
        n.tid = Some(v);
    }
    if let Some(s) = o.get("op_schema") {
        n.op_schema = text(s);
    }
    for (key, io) in [("inputs", &mut n.inputs), ("outputs", &mut n.outputs)] {
        match o.get(key) {
            Some(Value::Object(obj)) => {
                io.values = list(obj.get("values"));
                io.shapes = list(obj.get("shapes"));
                io.types = strings(obj.get("types"));
                io.strides = list(obj.get("strides"));
            }
            Some(Value::Array(vals)) => {
                let flat = &key[..key.len() - 1];
                io.values = vals.clone();
                io.shapes = list(o.get(&format!("{flat}_shapes")));
                io.types = strings(o.get(&format!("{flat}_types")));
                io.strides = list(o.get(&format!("{flat}_strides")));
            }
            _ => {}
        }
    }
    Some(n)
}

/// Parses a whole ET. Errors are one line.
pub fn parse(input: &mut dyn BufRead) -> Result<ExecutionTrace, String> {
    let root: Value = crate::json::from_reader(input).map_err(|e| {
        format!(
            "not a valid execution trace: {e}",
            e = e.to_string().lines().next().unwrap_or("")
        )
    })?;
    let o = root
        .as_object()
        .ok_or("an execution trace is a JSON object")?;
    let Some(Value::Array(raw)) = o.get("nodes") else {
        return Err("the execution trace has no `nodes` list".into());
    };
    let mut et = ExecutionTrace {
        schema: o.get("schema").map(text).unwrap_or_default(),
        pid: o.get("pid").and_then(int),
        ..ExecutionTrace::default()
    };
    let mut bad = 0usize;
    for x in raw {
        match node(x) {
            Some(n) => et.nodes.push(n),
            None => bad += 1,
        }
    }
    if bad > 0 {
        et.warnings.push(format!(
            "{bad} ET node(s) without an integer `id` were skipped"
        ));
    }
    Ok(et)
}

/// Bytes of one element of a tensor type `Tensor(float)`, from the dtype name.
pub fn dtype_size(dtype: &str) -> Option<f64> {
    let d = dtype.trim().trim_start_matches("c10::");
    Some(match d {
        "double" | "long" | "long int" | "int64_t" | "complex<float>" | "ComplexFloat" => 8.0,
        "float" | "int" | "int32_t" | "unsigned int" => 4.0,
        "Half" | "BFloat16" | "half" | "bfloat16" | "short" | "int16_t" => 2.0,
        "bool" | "unsigned char" | "signed char" | "char" | "uint8_t" | "int8_t" | "Byte"
        | "Float8_e4m3fn" | "Float8_e5m2" | "Float8_e4m3fnuz" | "Float8_e5m2fnuz" => 1.0,
        "complex<double>" | "ComplexDouble" => 16.0,
        _ => return None,
    })
}

/// Elements and bytes of the tensors among inputs or outputs. A tensor's element size
/// is the `itemsize` its value records (the 5th of `[tensor id, storage id, offset,
/// numel, itemsize, device]`), else its dtype's. Lists of tensors are not counted.
pub fn tensor_totals(io: &Io) -> (f64, f64) {
    let (mut elems, mut bytes) = (0.0, 0.0);
    for (i, ty) in io.types.iter().enumerate() {
        let Some(dtype) = ty.strip_prefix("Tensor(").and_then(|r| r.strip_suffix(')')) else {
            continue;
        };
        let Some(Value::Array(dims)) = io.shapes.get(i) else {
            continue;
        };
        let n: f64 = dims.iter().filter_map(int).map(|d| d as f64).product();
        let item = match io.values.get(i) {
            Some(Value::Array(v)) if v.len() >= 5 => int(&v[4]).map(|x| x as f64),
            _ => None,
        }
        .or_else(|| dtype_size(dtype));
        elems += n;
        bytes += n * item.unwrap_or(0.0);
    }
    (elems, bytes)
}

/// A list of JSON values as compact text: `[[256,256],[]]`.
pub fn compact(vals: &[Value]) -> String {
    serde_json::to_string(vals).unwrap_or_default()
}

/// The attributes an ET node contributes to a frame, in display order.
pub fn node_attrs(n: &EtNode) -> Vec<(&'static str, String)> {
    let mut a = Vec::new();
    if !n.op_schema.is_empty() {
        a.push(("op_schema", n.op_schema.clone()));
    }
    if !n.inputs.types.is_empty() {
        a.push(("input_shapes", compact(&n.inputs.shapes)));
        a.push(("input_types", format!("[{}]", n.inputs.types.join(","))));
    }
    if !n.inputs.strides.is_empty() {
        a.push(("input_strides", compact(&n.inputs.strides)));
    }
    if !n.outputs.types.is_empty() {
        a.push(("output_shapes", compact(&n.outputs.shapes)));
        a.push(("output_types", format!("[{}]", n.outputs.types.join(","))));
    }
    a
}

/// Metric columns an ET gives: per node, summed over the instances a node stands for.
pub const METRICS: [(&str, &str); 4] = [
    ("input elements", ""),
    ("input bytes", "B"),
    ("output elements", ""),
    ("output bytes", "B"),
];

pub fn node_metrics(n: &EtNode) -> [f64; 4] {
    let (ie, ib) = tensor_totals(&n.inputs);
    let (oe, ob) = tensor_totals(&n.outputs);
    [ie, ib, oe, ob]
}

/// The ET opened alone: its operator tree.
pub fn read(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    let et = parse(input)?;
    let mut warnings = et.warnings.clone();
    let mut cct = Cct::default();
    let index: std::collections::HashMap<i64, usize> = et
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id, i))
        .collect();
    // Children by parent, in id order; roots are nodes whose parent is themselves or
    // absent. A parent that is not in the file makes its child a root, with a warning.
    let mut order: Vec<usize> = (0..et.nodes.len()).collect();
    order.sort_by_key(|&i| et.nodes[i].id);
    let mut kids: std::collections::HashMap<i64, Vec<usize>> = Default::default();
    let mut roots = Vec::new();
    let mut orphans = 0usize;
    for &i in &order {
        let n = &et.nodes[i];
        match n.parent {
            Some(p) if p != n.id && index.contains_key(&p) => kids.entry(p).or_default().push(i),
            Some(p) if p != n.id && p != 0 => {
                orphans += 1;
                roots.push(i);
            }
            _ => roots.push(i),
        }
    }
    if orphans > 0 {
        warnings.push(format!(
            "{orphans} ET node(s) name a parent that is not in the file: shown as roots"
        ));
    }
    let mut count = Vec::new();
    let mut mets: Vec<[f64; 4]> = Vec::new();
    let mut stack: Vec<(usize, Option<u32>)> = roots.iter().rev().map(|&i| (i, None)).collect();
    let mut seen = vec![false; et.nodes.len()];
    while let Some((i, parent)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let n = &et.nodes[i];
        let kind = if n.op_schema.is_empty() {
            "annotation"
        } else {
            "operator"
        };
        let mut f = Frame::new(&n.name, kind);
        f.set_attr("et_id", &n.id.to_string());
        if let Some(r) = n.rf_id {
            f.set_attr("rf_id", &r.to_string());
        }
        if let Some(t) = n.tid {
            f.set_attr("tid", &t.to_string());
        }
        for (k, v) in node_attrs(n) {
            f.set_attr(k, &v);
        }
        let id = cct.add_node(parent, f);
        count.push(1.0);
        mets.push(node_metrics(n));
        if let Some(ks) = kids.get(&n.id) {
            for &k in ks.iter().rev() {
                stack.push((k, Some(id)));
            }
        }
    }
    let unreached = seen.iter().filter(|s| !**s).count();
    if unreached > 0 {
        warnings.push(format!(
            "{unreached} ET node(s) sit on a parent cycle and are not shown"
        ));
    }
    let mut metrics = MetricTable::new(cct.len());
    metrics.set("count", "", count);
    for (j, (name, unit)) in METRICS.iter().enumerate() {
        metrics.set(name, unit, mets.iter().map(|m| m[j]).collect());
    }
    let mut meta = vec![("et.schema".to_string(), et.schema.clone())];
    if let Some(pid) = et.pid {
        meta.push(("pid".into(), pid.to_string()));
    }
    meta.push(("et.nodes".into(), et.nodes.len().to_string()));
    Ok(Profile {
        call_graph: None,
        source,
        dialect: format!("PyTorch execution trace (schema {})", et.schema),
        cct,
        metrics,
        events: None,
        counters: None,
        meta,
        warnings,
        default_metric: "count".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_read_the_same_fields() {
        let old = r#"{"schema":"1.0.1","pid":1,"nodes":[
          {"name":"aten::add","id":5,"rf_id":3,"parent":4,"tid":1,"op_schema":"aten::add(Tensor self) -> Tensor",
           "inputs":[[6,7,0,16,4,"cuda:0"],1],"input_shapes":[[4,4],[]],"input_types":["Tensor(float)","Int"],
           "outputs":[[8,9,0,16,4,"cuda:0"]],"output_shapes":[[4,4]],"output_types":["Tensor(float)"]}]}"#;
        let new = r#"{"schema":"1.1.1-chakra.0.0.4","pid":1,"nodes":[
          {"name":"aten::add","id":5,"ctrl_deps":4,
           "attrs":[{"name":"rf_id","type":"uint64","value":3},{"name":"tid","type":"uint64","value":1},
                    {"name":"op_schema","type":"string","value":"aten::add(Tensor self) -> Tensor"}],
           "inputs":{"values":[[6,7,0,16,4,"cuda:0"],1],"shapes":[[4,4],[]],"types":["Tensor(float)","Int"],"strides":[[4,1],[]]},
           "outputs":{"values":[[8,9,0,16,4,"cuda:0"]],"shapes":[[4,4]],"types":["Tensor(float)"],"strides":[[4,1]]}}]}"#;
        let a = parse(&mut old.as_bytes()).unwrap();
        let b = parse(&mut new.as_bytes()).unwrap();
        for et in [&a, &b] {
            let n = &et.nodes[0];
            assert_eq!(
                (n.id, n.parent, n.rf_id, n.tid),
                (5, Some(4), Some(3), Some(1))
            );
            assert_eq!(n.op_schema, "aten::add(Tensor self) -> Tensor");
            assert_eq!(compact(&n.inputs.shapes), "[[4,4],[]]");
            assert_eq!(node_metrics(n), [16.0, 64.0, 16.0, 64.0]);
        }
        assert_eq!(compact(&b.nodes[0].inputs.strides), "[[4,1],[]]");
        assert!(claims(old.as_bytes()) && claims(new.as_bytes()));
        assert!(!claims(br#"{"nodes":[],"samples":[],"schema":1}"#));
        assert!(!claims(br#"{"traceEvents":[]}"#));
    }

    #[test]
    fn dtype_sizes() {
        assert_eq!(dtype_size("c10::BFloat16"), Some(2.0));
        assert_eq!(dtype_size("long int"), Some(8.0));
        assert_eq!(dtype_size("mystery"), None);
    }
}
