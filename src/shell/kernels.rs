//! `grove kernels`: the GPU kernel table over all the files.

use grove::cli::{KernelBy, KernelsArgs, Look};
use grove::gpu::{self, report};

use super::{input, look, output};

pub fn run(args: KernelsArgs, lk: &Look) -> Result<(), String> {
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
    // Instances from every file, aggregated by name.
    let mut per_file = Vec::new();
    // A directory or quoted glob of rank traces is its files, as everywhere.
    let files = input::expand(&args.files)?;
    for (i, f) in files.iter().enumerate() {
        let p = input::load_warning(f)?;
        // An input without kernels (a CPU-only trace, a callgrind profile) gives the
        // same answer whatever its kind: no rows, and a note that says why.
        let Some(ev) = p.events.as_ref() else {
            eprintln!(
                "grove: {}: no GPU kernels: a {} profile records no events (grove kernels reads traces)",
                f.display(),
                p.source.format.label()
            );
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
    let rows = gpu::kernels::merge(per_file, sort);
    let text = report::kernels_report(&rows, args.top, args.format, look::glyphs_of(lk).block)?;
    output::text(&text)
}
