//! `grove diff BASE NEW`: the ranked regressions and improvements by call path and by
//! kernel, the totals, and a verdict in the exit status (1: a regression past the
//! threshold). The two inputs go through the loading layer as one two-member ensemble,
//! exactly as `grove tree BASE NEW` opens them, so the numbers are the TUI's `diff`.

use std::fmt::Write as _;

use grove::app::compare::member_labels;
use grove::app::keymap::Keymap;
use grove::app::App;
use grove::cli::{DiffArgs, Format, Look, Writes};
use grove::diff::{compare_shown, steps, Change, Comparison, KernelChange, Side, Threshold};
use grove::ensemble;
use grove::export::formats::refusal;
use grove::model::Profile;
use grove::present::format;

use super::{input, look, output, Failure};

pub fn run(args: DiffArgs, labels: Option<&str>, lk: &Look) -> Result<(), Failure> {
    let files = [args.base.clone(), args.new.clone()];
    // The sides are called base and new unless --label names them: two runs of one
    // program often share a file stem and a rank, which would label them x#0 and x#1.
    let mut p = input::load_inputs(&files, Some(labels.unwrap_or("0=base,1=new")))?;
    // Step k of one run meets step k of the other (docs/commands.md, grove diff).
    let mut merged = 0;
    if !args.keep_steps {
        (p, merged) = steps::align(p);
    }
    let reshaped = reshape(p, &args.cmds)?;
    let (p, shown) = match &reshaped {
        Reshaped::Whole(p) => (&**p, None),
        Reshaped::App(app, shown) => (&app.profile, shown.as_deref()),
    };
    let members = member_labels(&p.metrics);
    let [base, new] = members.as_slice() else {
        return Err(format!(
            "{}, {}: grove diff compares two profiles, and these load as {} ({}): give \
             BASE and NEW one profile (or one summary) each",
            args.base.display(),
            args.new.display(),
            members.len(),
            members.join(", ")
        )
        .into());
    };
    let metric = match &args.metric {
        Some(m) => ensemble::base_metric(m),
        None => ensemble::base_metric(&p.default_metric),
    };
    let c = compare_shown(p, &metric, base, new, shown)
        .map_err(|e| format!("{}: {e}", args.base.display()))?;
    let threshold = Threshold::parse(&args.threshold, &c.unit)?;
    let micro = look::glyphs_of(lk).micro;
    let text = match args.format {
        Format::Csv => csv(p, &c, threshold, args.top),
        Format::Json => json(p, &c, threshold, args.top, merged),
        Format::Text => text(p, &c, threshold, args.top, micro, args.expand_names, merged),
        // Listed, not `_`: a new format is a compile error here until diff says
        // whether it writes it. `--format`'s parser refuses these already.
        f
        @ (Format::Parquet | Format::Hatchet | Format::Folded | Format::Thicket | Format::Svg) => {
            return Err(refusal(f, Writes::Tables).into())
        }
    };
    output::text(&text)?;
    let regressed = c.regressed(threshold);
    super::leave(reshaped);
    if regressed {
        // The report is on stdout; stderr says why the status is 1.
        return Err(Failure::finding(format!(
            "{} regressed past the threshold ({})",
            args.new.display(),
            args.threshold
        )));
    }
    Ok(())
}

/// The two runs' ensemble, reshaped by `--cmd` when given.
enum Reshaped {
    Whole(Box<Profile>),
    /// The app the commands ran in, and the nodes left in view when they hid some.
    App(Box<App>, Option<Vec<bool>>),
}

/// Runs `cmds` as `grove tree --cmd` runs them, on both sides at once (both are
/// columns of one tree): reshaping commands (`squash`, `group-by`, `derive`, ...)
/// change the tree compared, and those that hide rows (`focus`, `hide`, `limit`)
/// leave the nodes in view.
fn reshape(p: Profile, cmds: &[String]) -> Result<Reshaped, Failure> {
    if cmds.is_empty() {
        return Ok(Reshaped::Whole(Box::new(p)));
    }
    let mut app = App::with_categories(p, Keymap::default_map(), super::user_categories());
    app.use_data_order();
    for c in cmds {
        app.run(c)?;
        super::print_notes(&mut app);
    }
    let positions = app.export_positions();
    let n = app.profile.cct.len();
    let shown = (positions.len() < n).then(|| {
        let mut s = vec![false; n];
        for &q in &positions {
            s[app.tree.po.node[q as usize] as usize] = true;
        }
        s
    });
    Ok(Reshaped::App(Box::new(app), shown))
}

/// A name as the text report prints it: cut as `grove tree` cuts names (a kernel's
/// signature runs to 1,500 characters), whole with `--expand-names`.
fn short(name: &str, expand: bool) -> String {
    grove::export::text::shorten_name(name, expand)
}

/// The width kernel names are cut to in the text report.
const KERNEL_W: usize = 60;

/// Kernel names as the kernel panel shows them (whole with `--expand-names`): short
/// names (`gpu::short_names`: `void` and namespaces dropped, template arguments folded
/// unless they tell two kernels apart), cut to `KERNEL_W` so that names that differ
/// still differ (`present::heads`): three cuBLAS kernels no longer all read
/// `sm90_xmma_gemm_f16..._kernel__5x_cublas`.
fn kernel_names(names: &[&str], expand: bool) -> Vec<String> {
    if expand {
        return names.iter().map(|n| n.to_string()).collect();
    }
    let short = grove::gpu::short_names::distinct_short_names(names, "...");
    let short: Vec<&str> = short.iter().map(String::as_str).collect();
    grove::present::heads::distinct_heads(&short, KERNEL_W, "...")
}

/// A call path with each of its names cut as `short` cuts them.
fn short_path(p: &Profile, node: u32, expand: bool) -> String {
    let full = grove::model::paths::path_of(&p.cct, node);
    let long = p
        .cct
        .path(node)
        .iter()
        .any(|&n| p.cct.name(n).chars().count() > 39);
    if expand || !long {
        return full;
    }
    // Cut per part of the path's text, which keeps each name's sibling number (`#1`).
    full.split('/')
        .map(|part| short(part, false))
        .collect::<Vec<_>>()
        .join("/")
}

/// `+1.50 ms`: a difference always shows its sign.
fn signed(v: f64, unit: &str, micro: &str) -> String {
    let s = format::value(v, unit, micro);
    if v > 0.0 {
        format!("+{s}")
    } else {
        s
    }
}

fn share(v: f64, total: f64) -> String {
    if total == 0.0 || !v.is_finite() {
        return "-".into();
    }
    format!("{:+.1}%", v / total * 100.0)
}

fn text(
    p: &Profile,
    c: &Comparison,
    t: Threshold,
    top: usize,
    micro: &str,
    expand: bool,
    merged: usize,
) -> String {
    let u = c.unit.as_str();
    let v = |x: f64| format::value(x, u, micro);
    let d = |x: f64| signed(x, u, micro);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: {} (NEW) - {} (BASE), a node missing from one side counted as 0 there",
        c.metric, c.new_label, c.base_label
    );
    for l in [&c.base_label, &c.new_label] {
        match p.meta_value(&format!("{l}.file")) {
            Some(f) if !f.is_empty() => {
                let _ = writeln!(o, "{l}: {f}");
            }
            _ => {}
        }
    }
    let diff = c.new_total - c.base_total;
    let _ = writeln!(
        o,
        "total: base {}  new {}  diff {} ({})",
        v(c.base_total),
        v(c.new_total),
        d(diff),
        share(diff, c.base_total)
    );
    let how = match t {
        Threshold::Percent(x) if !c.kernels.is_empty() => format!(
            "{x}% of base total = {} (kernels: of base kernel total = {})",
            v(t.amount(c)),
            v(t.kernel_amount(c))
        ),
        Threshold::Percent(x) => format!("{x}% of base total = {}", v(t.amount(c))),
        Threshold::Amount(a) => v(a),
    };
    let _ = writeln!(o, "threshold: {how}");
    if merged > 0 {
        let _ = writeln!(o, "{}", steps::merged_note(merged));
    }
    let paths = |o: &mut String, title: &str, rows: Vec<&Change>| {
        let how = if c.inclusive_only {
            "inclusive: the metric has no exclusive column"
        } else {
            "self"
        };
        let _ = writeln!(o, "\n{title} by call path ({}, {how}):", c.metric);
        if rows.is_empty() {
            let _ = writeln!(o, "  none");
            return;
        }
        let _ = writeln!(
            o,
            "  {:>10} {:>7} {:>11} {:>10} {:>10}  {:<4}  path",
            "diff", "%", "diff (inc)", "base", "new", "only"
        );
        for x in rows {
            let _ = writeln!(
                o,
                "  {:>10} {:>7} {:>11} {:>10} {:>10}  {:<4}  {}",
                d(x.delta),
                share(x.delta, c.base_total),
                d(x.delta_inc),
                v(x.base),
                v(x.new),
                x.side.marker(),
                short_path(p, x.node, expand)
            );
        }
    };
    let (regs, imps) = lists(c, t);
    let (nr, ni) = (regs.len(), imps.len());
    paths(&mut o, "regressions", regs.into_iter().take(top).collect());
    paths(&mut o, "improvements", imps.into_iter().take(top).collect());
    let (kregs, kimps) = kernel_lists(c, t);
    let (nkr, nki) = (kregs.len(), kimps.len());
    if !c.kernels.is_empty() {
        let kregs: Vec<&KernelChange> = kregs.into_iter().take(top).collect();
        let kimps: Vec<&KernelChange> = kimps.into_iter().take(top).collect();
        let names: Vec<&str> = kregs
            .iter()
            .chain(&kimps)
            .map(|k| k.name.as_str())
            .collect();
        let shown = kernel_names(&names, expand);
        let name_of = |k: &KernelChange| -> String {
            names
                .iter()
                .position(|n| *n == k.name)
                .map_or_else(|| k.name.clone(), |i| shown[i].clone())
        };
        let kernels = |o: &mut String, title: &str, rows: Vec<&KernelChange>| {
            let _ = writeln!(o, "\n{title} by kernel ({}):", c.kernel_metric);
            if rows.is_empty() {
                let _ = writeln!(o, "  none");
                return;
            }
            let _ = writeln!(
                o,
                "  {:>10} {:>7} {:>10} {:>10}  {:<4}  kernel",
                "diff", "%", "base", "new", "only"
            );
            for k in rows {
                let _ = writeln!(
                    o,
                    "  {:>10} {:>7} {:>10} {:>10}  {:<4}  {}",
                    d(k.delta),
                    share(k.delta, c.kernel_base_total),
                    v(k.base),
                    v(k.new),
                    k.side.marker(),
                    name_of(k)
                );
            }
        };
        kernels(&mut o, "regressions", kregs);
        kernels(&mut o, "improvements", kimps);
    }
    let _ = writeln!(
        o,
        "\n{}: {nr} call path(s) and {nkr} kernel(s) regressed, {ni} call path(s) and \
         {nki} kernel(s) improved past the threshold",
        if nr + nkr > 0 { "REGRESSION" } else { "ok" }
    );
    o
}

fn lists(c: &Comparison, t: Threshold) -> (Vec<&Change>, Vec<&Change>) {
    (c.regressions(t).collect(), c.improvements(t).collect())
}

fn kernel_lists(c: &Comparison, t: Threshold) -> (Vec<&KernelChange>, Vec<&KernelChange>) {
    (
        c.kernel_regressions(t).collect(),
        c.kernel_improvements(t).collect(),
    )
}

/// A number as CSV and JSON carry it: empty (null) for a missing side.
fn num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x}")
    }
}

fn csv(p: &Profile, c: &Comparison, t: Threshold, top: usize) -> String {
    use grove::gpu::kernels::csv_field;
    let mut o = String::from("section,rank,name,base,new,diff,diff_inc,only\n");
    let _ = writeln!(
        o,
        "total,0,,{},{},{},,",
        num(c.base_total),
        num(c.new_total),
        num(c.new_total - c.base_total)
    );
    let (regs, imps) = lists(c, t);
    for (section, rows) in [("regression", regs), ("improvement", imps)] {
        for (i, x) in rows.into_iter().take(top).enumerate() {
            let _ = writeln!(
                o,
                "{section},{},{},{},{},{},{},{}",
                i + 1,
                csv_field(&x.path(p)),
                num(x.base),
                num(x.new),
                num(x.delta),
                num(x.delta_inc),
                x.side.marker()
            );
        }
    }
    let (kregs, kimps) = kernel_lists(c, t);
    for (section, rows) in [("kernel_regression", kregs), ("kernel_improvement", kimps)] {
        for (i, k) in rows.into_iter().take(top).enumerate() {
            let _ = writeln!(
                o,
                "{section},{},{},{},{},{},,{}",
                i + 1,
                csv_field(&k.name),
                num(k.base),
                num(k.new),
                num(k.delta),
                k.side.marker()
            );
        }
    }
    o
}

fn json(p: &Profile, c: &Comparison, t: Threshold, top: usize, merged: usize) -> String {
    use serde_json::{json, Value};
    let n = |x: f64| if x.is_nan() { Value::Null } else { json!(x) };
    let side = |s: Side| match s {
        Side::Both => Value::Null,
        s => json!(s.marker()),
    };
    let path_rows = |rows: Vec<&Change>| -> Vec<Value> {
        rows.into_iter()
            .take(top)
            .map(|x| {
                json!({"path": x.path(p), "base": n(x.base), "new": n(x.new),
                       "diff": x.delta, "diff_inc": x.delta_inc, "only": side(x.side)})
            })
            .collect()
    };
    let kernel_rows = |rows: Vec<&KernelChange>| -> Vec<Value> {
        rows.into_iter()
            .take(top)
            .map(|k| {
                json!({"kernel": k.name, "base": n(k.base), "new": n(k.new),
                       "diff": k.delta, "only": side(k.side)})
            })
            .collect()
    };
    let (regs, imps) = lists(c, t);
    let (kregs, kimps) = kernel_lists(c, t);
    let counts = json!({"regressions": regs.len(), "improvements": imps.len(),
                        "kernel_regressions": kregs.len(), "kernel_improvements": kimps.len()});
    let threshold = match t {
        Threshold::Percent(x) => json!({"percent": x, "amount": t.amount(c),
                                        "kernel_amount": t.kernel_amount(c)}),
        Threshold::Amount(a) => json!({"amount": a, "kernel_amount": a}),
    };
    let v = json!({
        "metric": c.metric,
        "inclusive_only": c.inclusive_only,
        "unit": c.unit,
        "base": {"label": c.base_label, "total": c.base_total},
        "new": {"label": c.new_label, "total": c.new_total},
        "diff": c.new_total - c.base_total,
        "threshold": threshold,
        "steps_merged": merged,
        "regressed": c.regressed(t),
        "counts": counts,
        "regressions": path_rows(regs),
        "improvements": path_rows(imps),
        "kernel_metric": c.kernel_metric,
        "kernel_base_total": c.kernel_base_total,
        "kernel_new_total": c.kernel_new_total,
        "kernel_regressions": kernel_rows(kregs),
        "kernel_improvements": kernel_rows(kimps),
    });
    format!("{v}\n")
}
