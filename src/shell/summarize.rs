//! `grove summarize`: a Parquet summary of each input (schema: `grove::summary`,
//! docs/scale-out.md), one input at a time so memory stays that of the largest trace.

use std::collections::HashSet;
use std::time::Instant;

use grove::cli::SummarizeArgs;
use grove::gpu;
use grove::summary;

use super::input;

pub fn run(args: SummarizeArgs) -> Result<(), String> {
    let files = input::expand(&args.files)?;
    if args.name.is_some() && files.len() != 1 {
        return Err(format!(
            "--name names one summary; {} inputs given",
            files.len()
        ));
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    // The breakdowns use HTA's types; a broken user categories file must not stop them
    // (as in `grove summary`).
    let categories = gpu::classify::Categories::load(None).unwrap_or_else(|e| {
        eprintln!("grove: warning: {e}; using the built-in categories");
        gpu::classify::Categories::builtin()
    });
    let opts = summary::write::Options {
        breakdown: gpu::breakdown::Options {
            hta_rounding: args.hta_rounding,
            ..Default::default()
        },
        categories,
    };
    let mut used = HashSet::new();
    for (i, f) in files.iter().enumerate() {
        let start = Instant::now();
        let p = input::load(Some(f))?;
        let base = match &args.name {
            Some(n) => n.clone(),
            None => {
                grove::ensemble::labels(std::slice::from_ref(&p), &Default::default()).remove(0)
            }
        };
        // Unique within this run (rank-0/trace.json, rank-1/trace.json); across the
        // tasks of a job array the rank in the trace, or --name, keeps them apart.
        let safe: String = base
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || "-_+".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut name = safe.clone();
        let mut k = 1;
        while !used.insert(name.clone()) {
            name = format!("{safe}_{k}");
            k += 1;
        }
        let w = summary::write::write(&p, &name, i, &args.out, &opts)?;
        eprintln!(
            "grove: {}: {} -> {}/{name}.*.parquet ({} files, {} bytes, {:.2} s)",
            f.display(),
            name,
            args.out.display(),
            w.files.len(),
            w.bytes,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
