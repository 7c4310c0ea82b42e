#!/usr/bin/env bash
# Tests scripts/slurm-summarize.sh on a real, single-node Slurm started here and stopped
# after: munged (unless one runs already), slurmctld and slurmd with a private
# configuration, state and ports in a temporary directory. Submits the job array over
# testdata's two ranks, waits for it, and checks that the summaries open as the traces do.
#
# Needs root and Debian's packages: apt-get install slurm-wlm munge
# Usage: scripts/slurm-local-test.sh [GROVE_BINARY]   (default $CARGO_TARGET_DIR/debug/grove)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
grove=$(realpath "${1:-${CARGO_TARGET_DIR:-target}/debug/grove}")
[ -x "$grove" ] || { echo "slurm-local-test: no grove at $grove (cargo build first)" >&2; exit 2; }
for t in slurmctld slurmd sbatch munged; do
    command -v "$t" >/dev/null || { echo "slurm-local-test: $t missing: apt-get install slurm-wlm munge" >&2; exit 2; }
done

t=$(mktemp -d /tmp/grove-slurm.XXXXXX)
host=$(hostname -s)
mkdir -p "$t/state" "$t/spool" "$t/out"
started_munge=
cleanup() {
    for pid in "$t/slurmd.pid" "$t/slurmctld.pid"; do
        [ -s "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
    done
    if [ -n "$started_munge" ] && [ -s /run/munge/munged.pid ]; then
        kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
    fi
    sleep 1
    echo "slurm-local-test: daemons stopped; logs in $t"
}
trap cleanup EXIT

if ! pgrep -x munged >/dev/null; then
    [ -s /etc/munge/munge.key ] || mungekey --create --force
    mkdir -p /run/munge && chown munge:munge /run/munge
    runuser -u munge -- munged
    started_munge=1
fi

cat > "$t/slurm.conf" <<EOF
ClusterName=grovetest
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd.pid
SlurmctldLogFile=$t/slurmctld.log
SlurmdLogFile=$t/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=$host CPUs=$(nproc) RealMemory=16000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$t/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 30); do
    sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed)' && break
    sleep 1
done
sinfo

printf '%s\n' "$repo/testdata/rank0.trace.json.gz" "$repo/testdata/rank1.trace.json.gz" > "$t/traces.txt"
start=$(date +%s.%N)
GROVE="$grove" sbatch --wait --array=0-1 --mem=1G --chdir="$t" \
    --output="$t/task-%A_%a.log" scripts/slurm-summarize.sh "$t/traces.txt" "$t/out"
echo "job array done in $(echo "$(date +%s.%N) - $start" | bc) s"
cat "$t"/task-*.log

ls -l "$t/out"
"$grove" tree "$repo/testdata/rank0.trace.json.gz" "$repo/testdata/rank1.trace.json.gz" --format csv > "$t/traces.csv"
"$grove" tree "$t/out" --format csv > "$t/summaries.csv"
if cmp -s "$t/traces.csv" "$t/summaries.csv"; then
    echo "ok: the job array's summaries open as the traces do"
else
    echo "slurm-local-test: the summaries differ from the traces" >&2
    exit 1
fi
