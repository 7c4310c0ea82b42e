//! `grove functions`: the functions table (every function once, merged over its call
//! sites), or the callers or callees of the functions a name matches.

use grove::cli::{Format, FunctionSort, FunctionsArgs};
use grove::export::formats::{refusal, Writes};
use grove::export::functions as write;
use grove::transform::functions::edges::Side;
use grove::transform::functions::{Column, Functions};

use super::{input, output};

pub fn run(args: FunctionsArgs, labels: Option<&str>, use_cache: bool) -> Result<(), String> {
    let p = input::load_inputs_cached(&args.files, labels, None, use_cache)?.profile;
    let file = args.files[0].display().to_string();
    let t = Functions::of_profile(&p);
    if t.metrics.is_empty() {
        return Err(format!("{file}: no metric to list functions by"));
    }
    let m = metric(&t, &p, args.metric.as_deref(), &file)?;
    let text = match (&args.callers, &args.callees) {
        (Some(name), _) => edges(&t, m, Side::Callers, name, &args)?,
        (_, Some(name)) => edges(&t, m, Side::Callees, name, &args)?,
        _ => {
            let by = match args.sort {
                FunctionSort::Self_ => Column::Self_,
                FunctionSort::Inclusive => Column::Inclusive,
                FunctionSort::Calls => Column::Calls,
                FunctionSort::Name => Column::Name,
                FunctionSort::Place => Column::Place,
            };
            if by == Column::Calls && t.calls.is_none() {
                return Err(format!("{file}: the input counts no calls to sort by"));
            }
            let mut rows = t.order(m, by, args.reverse);
            rows.truncate(args.top);
            match args.format {
                Format::Csv => write::table_csv(&t, m, &rows),
                Format::Json => write::table_json(&t, m, &rows),
                Format::Text => write::table_text(&t, m, &rows),
                other => return Err(refusal(other, Writes::Tables)),
            }
        }
    };
    let r = output::text(&text);
    super::leave((p, t));
    r
}

/// The table's metric `--metric` names (its inclusive column's name too), else the
/// profile's default metric, else the table's first.
fn metric(
    t: &Functions,
    p: &grove::model::Profile,
    asked: Option<&str>,
    file: &str,
) -> Result<usize, String> {
    let names = || t.metrics.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
    match asked {
        Some(a) => {
            let resolved = p.metrics.resolve(a).unwrap_or_else(|| a.to_string());
            t.metric(&resolved).or_else(|| t.metric(a)).ok_or_else(|| {
                let all = names();
                let hint = grove::present::suggest::did_you_mean(a, all.iter().map(String::as_str));
                format!(
                    "{file}: unknown metric {a:?}{hint} (metrics of the functions table: {})",
                    all.join(", ")
                )
            })
        }
        None => Ok(t.metric(&p.default_metric).unwrap_or(0)),
    }
}

/// The callers or callees of every function `name` matches, largest first.
fn edges(
    t: &Functions,
    m: usize,
    side: Side,
    name: &str,
    args: &FunctionsArgs,
) -> Result<String, String> {
    let found = t.find(name);
    if found.is_empty() {
        let labels: Vec<String> = t.functions.iter().map(|f| f.name.to_string()).collect();
        let hint = grove::present::suggest::did_you_mean(name, labels.iter().map(String::as_str));
        return Err(format!("no function named {name:?}{hint}"));
    }
    let of: Vec<_> = found
        .into_iter()
        .map(|f| {
            let mut e = t.edges(f, side);
            e.sort_by(|a, b| {
                b.value[m]
                    .total_cmp(&a.value[m])
                    .then(a.function.cmp(&b.function))
            });
            e.truncate(args.top);
            (f, e)
        })
        .collect();
    Ok(match args.format {
        Format::Csv => write::edges_csv(t, m, side, &of),
        Format::Json => write::edges_json(t, m, side, &of),
        Format::Text => write::edges_text(t, m, side, &of),
        other => return Err(refusal(other, Writes::Tables)),
    })
}
