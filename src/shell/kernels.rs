//! `grove kernels`: the GPU kernel table of the files: one input's table; several
//! inputs side by side, a row per profile and kernel with a `profile` column (the
//! runs of a kernel together, labelled as the ensemble labels them), or with
//! `--merge` one row per kernel over all the files (the ranks of one run).

use grove::cli::{KernelBy, KernelsArgs, Look};
use grove::gpu::{self, report};
use grove::model::{Cct, MetricTable, Profile};

use super::{input, look, output};

pub fn run(args: KernelsArgs, labels: Option<&str>, lk: &Look) -> Result<(), String> {
    let cats = gpu::classify::Categories::load(args.categories.as_deref())?;
    let sort = match args.by {
        KernelBy::Total => gpu::kernels::KernelSort::Total,
        KernelBy::Mean => gpu::kernels::KernelSort::Mean,
        KernelBy::Count => gpu::kernels::KernelSort::Count,
    };
    let opt = gpu::kernels::TableOptions {
        all: args.all,
        by_category: args.by_category,
        sort,
    };
    // Each file's rows, and the file's profile without its tree and events (what the
    // labels are made from).
    let mut per_file = Vec::new();
    let mut members = Vec::new();
    // A directory or quoted glob of rank traces is its files, as everywhere.
    let files = input::expand(&args.files)?;
    for (i, f) in files.iter().enumerate() {
        let p = input::load_warning(f)?;
        // An input without kernels (a CPU-only trace, a callgrind profile) gives the
        // same answer whatever its kind: no rows, and a note that says why.
        members.push(bare(&p));
        let Some(ev) = p.events.as_ref() else {
            eprintln!(
                "grove: {}: no GPU kernels: a {} profile records no events (grove kernels reads traces)",
                f.display(),
                p.source.format.label()
            );
            per_file.push((Vec::new(), Vec::new()));
            continue;
        };
        let model = gpu::GpuModel::new(ev, cats.clone());
        if model.activities.is_empty() && ev.lod.is_none() {
            eprintln!(
                "grove: {}: no GPU kernels: the trace has no GPU activity (kernels, memcpy, memset)",
                f.display()
            );
        }
        // Low-memory mode: the same rows from the summary's durations.
        let (rows, durs) = match ev.lod.as_deref() {
            Some(lod) => gpu::lod::table(ev, lod, &cats, &opt),
            None => {
                let rows = gpu::kernels::table(ev, &model, &opt);
                let durs = gpu::kernels::durations(ev, &rows);
                (rows, durs)
            }
        };
        per_file.push((rows, durs));
        if i + 1 == files.len() {
            super::leave((p, model));
        }
    }
    let rows = if per_file.len() > 1 && !args.merge {
        let labels = input::labels_of(&members, labels)?;
        let per: Vec<(String, Vec<gpu::kernels::KernelRow>)> = labels
            .into_iter()
            .zip(per_file)
            .map(|(l, (rows, _))| (l, rows))
            .collect();
        let mut rows = gpu::kernels::side_by_side(per, sort);
        gpu::kernels::top_kernels(&mut rows, args.top);
        rows
    } else {
        let mut rows = gpu::kernels::merge(per_file, sort);
        rows.truncate(args.top);
        rows
    };
    let text = report::kernels_report(&rows, usize::MAX, args.format, look::glyphs_of(lk).block)?;
    output::text(&text)
}

/// A profile's source and metadata, without its tree, table and events: what the
/// ensemble's labels read.
pub(super) fn bare(p: &Profile) -> Profile {
    Profile {
        source: p.source.clone(),
        dialect: p.dialect.clone(),
        cct: Cct::default(),
        metrics: MetricTable::new(0),
        events: None,
        counters: None,
        meta: p.meta.clone(),
        warnings: Vec::new(),
        default_metric: String::new(),
        call_graph: None,
    }
}
