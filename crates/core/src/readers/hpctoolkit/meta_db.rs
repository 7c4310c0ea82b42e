//! meta.db: the metric descriptions and the context tree.

use super::*;

#[derive(Debug, Clone)]
pub(super) struct Scope {
    pub(super) name: String,
    /// 0 custom, 1 point, 2 execution, 3 transitive.
    pub(super) kind: u8,
}

#[derive(Debug, Clone)]
pub(super) struct Summary {
    pub(super) scope: Scope,
    pub(super) formula: String,
    /// 0 sum, 1 min, 2 max.
    pub(super) combine: u8,
    pub(super) id: u16,
}

#[derive(Debug, Clone)]
pub(super) struct Metric {
    pub(super) name: String,
    /// (scope, propMetricId)
    pub(super) scopes: Vec<(Scope, u16)>,
    pub(super) summaries: Vec<Summary>,
}

pub(super) struct Meta {
    pub(super) minor: u8,
    pub(super) title: String,
    pub(super) description: String,
    pub(super) id_names: Vec<String>,
    pub(super) metrics: Vec<Metric>,
    pub(super) cct: Cct,
    /// ctx id -> node
    pub(super) node_of: HashMap<u32, u32>,
}

/// Caches of the strings behind module / file / function pointers.
#[derive(Default)]
pub(super) struct Names {
    pub(super) modules: HashMap<u64, Arc<str>>,
    pub(super) files: HashMap<u64, Arc<str>>,
    pub(super) functions: HashMap<u64, Function>,
}

#[derive(Clone)]
pub(super) struct Function {
    pub(super) name: Option<Arc<str>>,
    pub(super) module: Option<Arc<str>>,
    pub(super) offset: u64,
    pub(super) file: Option<Arc<str>>,
    pub(super) line: u32,
}

impl Names {
    pub(super) fn module(&mut self, b: &Bytes, p: u64) -> Result<Arc<str>, String> {
        if let Some(s) = self.modules.get(&p) {
            return Ok(s.clone());
        }
        let s: Arc<str> = b.cstr(b.u64(p.saturating_add(8))?)?.into();
        self.modules.insert(p, s.clone());
        Ok(s)
    }

    pub(super) fn file(&mut self, b: &Bytes, p: u64) -> Result<Arc<str>, String> {
        if let Some(s) = self.files.get(&p) {
            return Ok(s.clone());
        }
        let s: Arc<str> = b.cstr(b.u64(p.saturating_add(8))?)?.into();
        self.files.insert(p, s.clone());
        Ok(s)
    }

    pub(super) fn function(&mut self, b: &Bytes, p: u64) -> Result<Function, String> {
        if let Some(f) = self.functions.get(&p) {
            return Ok(f.clone());
        }
        let p_name = b.u64(p)?;
        let p_module = b.u64(p.saturating_add(8))?;
        let offset = b.u64(p.saturating_add(0x10))?;
        let p_file = b.u64(p.saturating_add(0x18))?;
        let line = b.u32(p.saturating_add(0x20))?;
        let f = Function {
            name: if p_name != 0 {
                Some(b.cstr(p_name)?.into())
            } else {
                None
            },
            module: if p_module != 0 {
                Some(self.module(b, p_module)?)
            } else {
                None
            },
            offset,
            file: if p_file != 0 {
                Some(self.file(b, p_file)?)
            } else {
                None
            },
            line,
        };
        self.functions.insert(p, f.clone());
        Ok(f)
    }
}

pub(super) fn read_scope(b: &Bytes, p: u64) -> Result<Scope, String> {
    Ok(Scope {
        name: b.cstr(b.u64(p)?)?,
        kind: b.u8(p.saturating_add(8))?,
    })
}

/// The Identifier Names section: the name of each id tuple `kind`.
pub(super) fn read_id_names(b: &Bytes, idnames: Section) -> Result<Vec<String>, String> {
    need(b, idnames, 0x09, "IdNames")?;
    let pp_names = b.u64(idnames.p)?;
    let n_kinds = b.u8(idnames.p + 8)? as u64;
    b.check_array(pp_names, n_kinds, 8, 0, b.len(), "identifier names")?;
    let mut id_names = Vec::new();
    for k in 0..n_kinds {
        id_names.push(b.cstr(b.u64(pp_names + 8 * k)?)?);
    }
    Ok(id_names)
}

/// Just the identifier names of meta.db (for [`read_traces`]).
pub(super) fn meta_id_names(d: &[u8]) -> Result<Vec<String>, String> {
    let b = Bytes { name: "meta.db", d };
    let (_, s) = header(&b, b"meta", b"_meta.db", &["General", "IdNames"])?;
    read_id_names(&b, s[1])
}

pub(super) fn parse_meta(d: &[u8]) -> Result<Meta, String> {
    let b = Bytes { name: "meta.db", d };
    let names = [
        "General",
        "IdNames",
        "Metrics",
        "Context",
        "Strings",
        "Modules",
        "Files",
        "Functions",
    ];
    let (minor, s) = header(&b, b"meta", b"_meta.db", &names)?;
    let (general, idnames, metrics_sec, context) = (s[0], s[1], s[2], s[3]);

    // General properties.
    need(&b, general, 0x10, "General")?;
    let title = b.cstr(b.u64(general.p)?)?;
    let description = b.cstr(b.u64(general.p + 8)?)?;

    let id_names = read_id_names(&b, idnames)?;
    let metrics = read_metrics(b, metrics_sec)?;
    let (mut cct, node_of) = read_context_tree(b, context)?;
    cct.finish();
    Ok(Meta {
        minor,
        title,
        description,
        id_names,
        metrics,
        cct,
        node_of,
    })
}

/// The Performance Metrics section: each metric with its propagation scopes and summary
/// statistics.
fn read_metrics(b: Bytes, metrics_sec: Section) -> Result<Vec<Metric>, String> {
    need(&b, metrics_sec, 0x1b, "Metrics")?;
    let m = metrics_sec.p;
    let p_metrics = b.u64(m)?;
    let n_metrics = b.u32(m + 8)? as u64;
    let sz_metric = b.u8(m + 0x0c)? as u64;
    let sz_scope_inst = b.u8(m + 0x0d)? as u64;
    let sz_summary = b.u8(m + 0x0e)? as u64;
    need_size(&b, m + 0x0c, sz_metric, 0x1c, "metric description")?;
    need_size(
        &b,
        m + 0x0d,
        sz_scope_inst,
        0x0a,
        "propagation scope instance",
    )?;
    need_size(&b, m + 0x0e, sz_summary, 0x14, "summary statistic")?;
    let (lo, hi) = (metrics_sec.p, metrics_sec.end());
    b.check_array(
        p_metrics,
        n_metrics,
        sz_metric,
        lo,
        hi,
        "metric descriptions",
    )?;
    let mut metrics = Vec::new();
    for i in 0..n_metrics {
        let md = p_metrics + i * sz_metric;
        let name = b.cstr(b.u64(md)?)?;
        let p_insts = b.u64(md + 8)?;
        let p_sums = b.u64(md + 0x10)?;
        let n_insts = b.u16(md + 0x18)? as u64;
        let n_sums = b.u16(md + 0x1a)? as u64;
        b.check_array(
            p_insts,
            n_insts,
            sz_scope_inst,
            lo,
            hi,
            "propagation scope instances",
        )?;
        b.check_array(p_sums, n_sums, sz_summary, lo, hi, "summary statistics")?;
        let mut scopes = Vec::new();
        for j in 0..n_insts {
            let si = p_insts + j * sz_scope_inst;
            scopes.push((read_scope(&b, b.u64(si)?)?, b.u16(si + 8)?));
        }
        let mut summaries = Vec::new();
        for j in 0..n_sums {
            let ss = p_sums + j * sz_summary;
            summaries.push(Summary {
                scope: read_scope(&b, b.u64(ss)?)?,
                formula: b.cstr(b.u64(ss + 8)?)?,
                combine: b.u8(ss + 0x10)?,
                id: b.u16(ss + 0x12)?,
            });
        }
        metrics.push(Metric {
            name,
            scopes,
            summaries,
        });
    }
    Ok(metrics)
}

/// The Context Tree section: the entry points and their contexts, and the node of each
/// context id.
fn read_context_tree(b: Bytes, context: Section) -> Result<(Cct, HashMap<u32, u32>), String> {
    need(&b, context, 0x0b, "Context")?;
    let p_entries = b.u64(context.p)?;
    let n_entries = b.u16(context.p + 8)? as u64;
    let sz_entry = b.u8(context.p + 0x0a)? as u64;
    need_size(&b, context.p + 0x0a, sz_entry, 0x20, "entry point")?;
    let (lo, hi) = (context.p, context.end());
    b.check_array(p_entries, n_entries, sz_entry, lo, hi, "entry points")?;
    let mut cct = Cct::default();
    let mut node_of = HashMap::new();
    let mut names = Names::default();
    // Every context takes at least 32 bytes of the section: more visits mean a cycle.
    let max_contexts = context.sz / 0x20 + 1;
    let mut visited = 0u64;
    for i in 0..n_entries {
        let e = p_entries + i * sz_entry;
        let sz_children = b.u64(e)?;
        let p_children = b.u64(e + 8)?;
        let ctx_id = b.u32(e + 0x10)?;
        let kind = b.u16(e + 0x14)?;
        let p_pretty = b.u64(e + 0x18)?;
        let name = if p_pretty != 0 {
            b.cstr(p_pretty)?
        } else {
            match kind {
                1 => "main thread".into(),
                2 => "application thread".into(),
                _ => "unknown entry".into(),
            }
        };
        let mut frame = Frame::new(&name, "entry");
        frame
            .attrs
            .push(("ctx_id".into(), ctx_id.to_string().into()));
        let node = cct.add_node(None, frame);
        node_of.insert(ctx_id, node);
        let mut stack: Vec<(u64, u64, u32)> = Vec::new();
        if sz_children > 0 {
            b.check_array(
                p_children,
                sz_children,
                1,
                lo,
                hi,
                "children of an entry point",
            )?;
            stack.push((p_children, p_children + sz_children, node));
        }
        while let Some(top) = stack.last_mut() {
            let (at, end, parent) = *top;
            if at >= end {
                stack.pop();
                continue;
            }
            visited += 1;
            if visited > max_contexts {
                return Err(b.err(at, "the context tree loops back on itself"));
            }
            if at + 0x20 > end {
                return Err(b.err(at, "context overruns its parent's children block"));
            }
            let n_flex = b.u8(at + 0x17)? as u64;
            let size = 0x20 + 8 * n_flex;
            if at + size > end {
                return Err(b.err(at, "context overruns its parent's children block"));
            }
            top.0 = at + size;
            let (frame, ctx_id) = context_frame(&b, at, n_flex, &mut names)?;
            let node = cct.add_node(Some(parent), frame);
            if node_of.insert(ctx_id, node).is_some() {
                return Err(b.err(at + 0x10, format!("context id {ctx_id} appears twice")));
            }
            let sz_children = b.u64(at)?;
            let p_children = b.u64(at + 8)?;
            if sz_children > 0 {
                b.check_array(p_children, sz_children, 1, lo, hi, "children of a context")?;
                stack.push((p_children, p_children + sz_children, node));
            }
        }
    }
    Ok((cct, node_of))
}

/// A context's flex fields, by its flags: its function, source line, and module
/// offset.
struct Flex {
    function: Option<Function>,
    src: Option<(Option<Arc<str>>, u32)>,
    point: Option<(Option<Arc<str>>, u64)>,
}

/// Reads the flex area of the context at `at` and builds its frame.
pub(super) fn context_frame(
    b: &Bytes,
    at: u64,
    n_flex: u64,
    names: &mut Names,
) -> Result<(Frame, u32), String> {
    let ctx_id = b.u32(at + 0x10)?;
    let flags = b.u8(at + 0x14)?;
    let relation = b.u8(at + 0x15)?;
    let lexical = b.u8(at + 0x16)?;
    let flex = read_flex(b, at, n_flex, (ctx_id, flags), names)?;
    let (name, kind) = context_name(lexical, ctx_id, &flex);
    let Flex {
        function,
        src,
        point,
    } = flex;
    let mut frame = Frame::new(&name, kind);
    let attrs = &mut frame.attrs;
    // Where: a function's definition, else the context's own source line.
    let (file, line) = match (&function, &src) {
        (
            Some(Function {
                file: Some(f),
                line,
                ..
            }),
            _,
        ) => (Some(f.clone()), Some(*line)),
        (_, Some((f, l))) => (f.clone(), Some(*l)),
        _ => (None, None),
    };
    if let Some(f) = file {
        attrs.push(("file".into(), f));
    }
    if let Some(l) = line {
        attrs.push(("line".into(), l.to_string().into()));
    }
    let module = match (&point, &function) {
        (Some((Some(m), _)), _) => Some(m.clone()),
        (
            _,
            Some(Function {
                module: Some(m), ..
            }),
        ) => Some(m.clone()),
        _ => None,
    };
    if let Some(m) = module {
        attrs.push(("module".into(), m));
    }
    if let Some((_, off)) = point {
        attrs.push(("offset".into(), format!("0x{off:x}").into()));
    }
    if relation == 2 {
        attrs.push(("inlined".into(), "true".into()));
    }
    attrs.push(("ctx_id".into(), ctx_id.to_string().into()));
    Ok((frame, ctx_id))
}

/// The flex fields of the context at `at` that its flags say it has.
fn read_flex(
    b: &Bytes,
    at: u64,
    n_flex: u64,
    (ctx_id, flags): (u32, u8),
    names: &mut Names,
) -> Result<Flex, String> {
    // Flex sub-fields in packing order: u64 take a whole word, two u32 share one.
    let flex = at + 0x20;
    let mut word = 0u64;
    let mut half: Option<u64> = None;
    let mut next = |four: bool| -> Result<u64, String> {
        let off = if four {
            if let Some(h) = half.take() {
                h
            } else {
                let o = flex + 8 * word;
                word += 1;
                half = Some(o + 4);
                o
            }
        } else {
            let o = flex + 8 * word;
            word += 1;
            o
        };
        if word > n_flex {
            return Err(b.err(
                at,
                format!("context {ctx_id}: its flags need more than {n_flex} flex words"),
            ));
        }
        Ok(off)
    };
    let mut out = Flex {
        function: None,
        src: None,
        point: None,
    };
    if flags & 1 != 0 {
        let p = b.u64(next(false)?)?;
        if p != 0 {
            out.function = Some(names.function(b, p)?);
        }
    }
    if flags & 2 != 0 {
        let p_file = b.u64(next(false)?)?;
        let line = b.u32(next(true)?)?;
        let file = if p_file != 0 {
            Some(names.file(b, p_file)?)
        } else {
            None
        };
        out.src = Some((file, line));
    }
    if flags & 4 != 0 {
        let p_module = b.u64(next(false)?)?;
        let offset = b.u64(next(false)?)?;
        let module = if p_module != 0 {
            Some(names.module(b, p_module)?)
        } else {
            None
        };
        out.point = Some((module, offset));
    }
    Ok(out)
}

/// A context's name and kind, by its lexical type.
fn context_name(lexical: u8, ctx_id: u32, flex: &Flex) -> (String, &'static str) {
    let file_line = |file: &Option<Arc<str>>, line: u32| -> String {
        match file {
            Some(f) => format!("{}:{line}", basename(f)),
            None => format!("<unknown file>:{line}"),
        }
    };
    let module_offset = |m: &Option<Arc<str>>, off: u64| -> String {
        match m {
            Some(m) => format!("{}+0x{off:x}", basename(m)),
            None => format!("0x{off:x}"),
        }
    };
    let (function, src, point) = (&flex.function, &flex.src, &flex.point);
    match lexical {
        0 => {
            let name = match (function, point) {
                (Some(Function { name: Some(n), .. }), _) => n.to_string(),
                (Some(f), _) => unknown_procedure(&f.module, f.offset),
                (None, Some((m, off))) => unknown_procedure(m, *off),
                (None, None) => "<unknown procedure>".into(),
            };
            (name, "function")
        }
        1 => (
            match src {
                Some((f, l)) => format!("loop at {}", file_line(f, *l)),
                None => "loop".into(),
            },
            "loop",
        ),
        2 => (
            match src {
                Some((f, l)) => file_line(f, *l),
                None => "<unknown line>".into(),
            },
            "line",
        ),
        3 => (
            match point {
                Some((m, off)) => module_offset(m, *off),
                None => "<unknown instruction>".into(),
            },
            "instruction",
        ),
        _ => (format!("context {ctx_id}"), "context"),
    }
}

pub(super) fn unknown_procedure(module: &Option<Arc<str>>, offset: u64) -> String {
    match module {
        Some(m) => format!("<unknown procedure> 0x{offset:x} [{}]", basename(m)),
        None => format!("<unknown procedure> 0x{offset:x}"),
    }
}
