//! The examples and notes after each `--help` (kept apart so the argument definitions in
//! cli.rs stay readable).

pub const MAIN: &str = "\
Examples:
  grove trace.pt.trace.json.gz            open a trace in the TUI
  grove rank0.json.gz rank1.json.gz       an ensemble: one column per file
  grove 'job/rank-*/trace.json.gz'        a quoted glob, expanded by grove
  grove tree profile.json --depth 3       the tree, headless
  grove functions callgrind.out.1234      every function: self, inclusive, calls
  grove summarize rank*.json.gz -o sums/  Parquet summaries; then `grove sums/`
  grove completions bash > ~/.local/share/bash-completion/completions/grove";

pub const MAIN_LONG: &str = "\
Examples:
  grove trace.pt.trace.json.gz            open a trace in the TUI
  grove rank0.json.gz rank1.json.gz       an ensemble: one column per file
  grove 'job/rank-*/trace.json.gz'        a quoted glob, expanded by grove
  grove tree profile.json --depth 3       the tree, headless
  grove functions callgrind.out.1234      every function: self, inclusive, calls
  grove summarize rank*.json.gz -o sums/  Parquet summaries; then `grove sums/`
  grove completions bash > ~/.local/share/bash-completion/completions/grove

Output formats (--format): text, csv, json, parquet, hatchet, folded, thicket, svg;
each subcommand accepts those that apply to it.

Colour (--color): never > always/16/256/truecolor > NO_COLOR (off) > CLICOLOR_FORCE
(on) > whether stdout is a terminal.

Exit status:
  0  success
  1  a finding: replay --strict refused a session whose input changed; grove diff
     found a regression past its threshold
  2  a usage error or an input grove cannot read (one line on stderr)
  130  Ctrl-C on the TUI's loading screen (q there cancels with 0)

Big traces: --steps 5-7 (ProfilerStep#5 to #7) or --window 2.1s-2.4s (after the
first event) loads a part of a Chrome/Kineto trace; see docs/guide.md.";

pub const TREE: &str = "\
Examples:
  grove tree profile.json --depth 3
  grove tree run.cali --metric 'time (inc),time' --format csv
  grove tree trace.json.gz --format folded | flamegraph.pl > flame.svg
  grove tree trace.json.gz --format parquet > tree.parquet
  grove tree trace.json.gz --cmd 'sort time desc' --cmd hot-path --color always | less -R
  grove tree perf.data.txt --inverted --depth 2    the bottom-up tree (callers under each function)
  grove tree callgrind.out.1234 --format svg > flame.svg   a flame graph (inferno)";

pub const FUNCTIONS: &str = "\
Examples:
  grove functions callgrind.out.1234 --top 20
  grove functions callgrind.out.1234 --sort inclusive --top 20
  grove functions callgrind.out.1234 --callers qsort_rec
  grove functions trace.json.gz --metric gpu_time --callees 'aten::linear' --format csv
  grove tree callgrind.out.1234 --inverted --depth 2     the bottom-up tree

A function is a name with its module (else file) where the input names one; a
recursive function's inclusive cost counts once per call path. Call-graph inputs
(callgrind, gprof2dot DOT, pstats) give the file's own per-function and per-edge
figures.";

pub const DIFF: &str = "\
Examples:
  grove diff before.json.gz after.json.gz
  grove diff base.cali new.cali --metric time --threshold 2ms --top 5
  grove diff sums-old/ sums-new/ --format json | jq .regressions
  grove diff run1.json.gz run2.json.gz --cmd 'focus \"python/ProfilerStep#*\"'

NEW - BASE per call path (self value of the metric) and per GPU kernel name; a node
or kernel missing from one side counts as zero there. A regression is a difference
above the threshold (default 1%: a share of BASE's total; or an amount: 2ms, 150us).
Training steps (ProfilerStep#N, numbered differently in two runs) merge into one
ProfilerStep#* on both sides unless --keep-steps.

Exit status:
  0  no regression past the threshold
  1  at least one regression past the threshold
  2  a usage error or an input grove cannot read";

pub const INFO: &str = "\
Examples:
  grove info trace.json.gz
  grove info rank*.json.gz --format json | jq .nodes
  grove info hpctoolkit-database/";

pub const KERNELS: &str = "\
Examples:
  grove kernels trace.json.gz --top 10
  grove kernels rank*.json.gz --by mean --format csv
  grove kernels trace.json.gz --by-category --categories my-rules.toml";

pub const SQL: &str = "\
Examples:
  grove sql trace.json.gz 'select name, count(*), sum(duration) from kernels group by name'
  grove sql trace.json.gz --sql-file top-kernels.sql --format csv
  grove sql rank*.json.gz 'select profile, step, sum(duration) from kernels group by profile, step'
Tables and columns: docs/sql.md. A bad query prints one line (with its column) and exits 2.";

pub const SUMMARY: &str = "\
Examples:
  grove summary trace.json.gz
  grove summary rank*.json.gz --table all --format csv
  grove summary trace.json.gz --table idle --kernel-wait 50us --hta-rounding";

pub const REPLAY: &str = "\
Examples:
  grove replay session.jsonl
  grove replay session.jsonl --format json --depth 2
  grove replay session.jsonl --input other-run.json.gz --strict
  grove --replay session.jsonl                 reopen it in the TUI";

pub const SUMMARIZE: &str = "\
Examples:
  grove summarize rank*.trace.json.gz -o summaries/
  srun -n 64 sh -c 'grove summarize traces/rank$SLURM_PROCID.json.gz -o summaries/'
  grove summaries/                              open them as an ensemble
  duckdb -c \"select input, sum(gpu_time) from 'summaries/*.cct.parquet' group by 1\"
See docs/scale-out.md for the schema and a Slurm job-array script.";

pub const COMPLETIONS: &str = "\
Examples:
  grove completions bash > ~/.local/share/bash-completion/completions/grove
  grove completions zsh > ~/.zfunc/_grove        (with fpath+=~/.zfunc in ~/.zshrc)
  grove completions fish > ~/.config/fish/completions/grove.fish";

pub const MAN: &str = "\
Examples:
  grove man > ~/.local/share/man/man1/grove.1 && man grove
  grove man | man -l -";
