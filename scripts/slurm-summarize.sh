#!/usr/bin/env bash
# Summarize one trace per array task, where the traces are (docs/scale-out.md).
#
#   ls /scratch/job42/traces/*.json.gz > traces.txt
#   sbatch --array=0-$(( $(wc -l < traces.txt) - 1 ))%64 scripts/slurm-summarize.sh traces.txt summaries/
#   grove summaries/                       # later, on the login node: the ensemble
#
# Each task reads line SLURM_ARRAY_TASK_ID (from 0) of the list and writes
# OUT/NAME.*.parquet, NAME being rank{R} when the trace names its rank, else the file
# stem. Tasks share nothing but the output directory (each file appears by rename, so a
# reader never sees half of one); a rerun of one task replaces its own files only.
# `%64` caps the tasks running at once: each reads one trace from the file system.
#
# The defaults below fit a 1 GB trace (grove holds ~1.6x a trace while summarizing);
# override them on the sbatch line (--mem=8G, --time=...).
#SBATCH --job-name=grove-summarize
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#SBATCH --time=00:30:00
#SBATCH --output=grove-summarize-%A_%a.log
set -euo pipefail

list="${1:?usage: sbatch --array=0-N scripts/slurm-summarize.sh LIST OUTDIR}"
out="${2:?usage: sbatch --array=0-N scripts/slurm-summarize.sh LIST OUTDIR}"
task="${SLURM_ARRAY_TASK_ID:?not an array task: submit with sbatch --array}"
grove="${GROVE:-grove}"

trace=$(sed -n "$((task + 1))p" "$list")
if [ -z "$trace" ]; then
    echo "grove-summarize: task $task: no line $((task + 1)) in $list" >&2
    exit 2
fi
exec "$grove" summarize "$trace" -o "$out"
