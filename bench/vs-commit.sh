#!/usr/bin/env bash
# The seeds' four workloads on this checkout against an earlier commit, in one run: did a change cost
# speed? (Issue 39 asks this of the SPI reshaping: a ratio against the commit before the change, same
# run, never an absolute number alone.)
#
# The earlier commit is checked out in a scratch git worktree (outside the repository, removed at the
# end) and its CLI jar built there with `mvn -o package` (nothing is installed, so the local Maven
# repository keeps this checkout's artifacts). Then, in alternating rounds (the order of the two builds
# alternates too), each build runs `iomap bench` on the RAM device, xfs-like, for each workload:
#
#   overwrite-1k     examples/seed-overwrite-1k.fio, 1 KiB blocks (UnixBench fstime-w's shape)
#   seqwrite-128k    examples/seed-seqwrite-128k.fio (512 MiB of 128 KiB writes, end_fsync)
#   randwrite-4k     examples/seed-randwrite-4k.fio on 64 KiB pages (8 jobs, fdatasync per write)
#   randwrite-4k-dio bench/jobs/seed-randwrite-4k-direct.fio (the same, O_DIRECT)
#
# and prints one table: the median write bandwidth of each build over the rounds, the ratio
# this/base, and the write amplification of each (device bytes written / bytes the jobs wrote,
# exact). Bandwidth depends on the machine's load: run it on a quiet machine, and read the ratio.
#
# Usage: bench/vs-commit.sh BASE [--rounds N] [--warmup N] [--only LIST] [--out FILE]
#   BASE          the commit to compare against (e.g. the commit before a change)
#   --rounds N    alternating rounds (default 4; keep it even: on a 2-core machine the first run of
#                 each pair was measured up to 1.5x faster than the second on seqwrite-128k, so
#                 each build must go first as often as second)
#   --warmup N    `iomap bench --warmup N` for both builds (default 1)
#   --only LIST   comma list of workload names (default: all four)
#   --out FILE    also write the table and the per-run lines to FILE
# Needs this checkout's iomap-cli/target/iomap.jar built first (mvn -q install -DskipTests).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
base="" rounds=4 warmup=1 only="" out=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --warmup) warmup="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "vs-commit: unknown option $1" >&2; exit 2 ;;
        *) base="$1"; shift ;;
    esac
done
[[ -n "$base" ]] || { echo "usage: bench/vs-commit.sh BASE [--rounds N] [--warmup N] [--only LIST] [--out FILE]" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "vs-commit: --rounds wants a positive number" >&2; exit 2; }
((rounds % 2 == 0)) || echo "vs-commit: warning: an odd number of rounds lets one build go first more often" >&2
[[ -f "$root/iomap-cli/target/iomap.jar" ]] || { echo "vs-commit: build this checkout first: mvn -q install -DskipTests" >&2; exit 2; }
base_sha="$(git -C "$root" rev-parse --verify "$base^{commit}")" || { echo "vs-commit: no commit $base" >&2; exit 2; }
this_sha="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- . ':!bench' || echo +dirty)"

if (($(stat -c %Y "$root/iomap-cli/target/iomap.jar") < $(git -C "$root" log -1 --format=%ct HEAD))); then
    echo "vs-commit: warning: iomap-cli/target/iomap.jar is older than HEAD; 'this' is what it was built from" >&2
fi
scratch="$(mktemp -d "${TMPDIR:-/tmp}/iomap-vs-commit.XXXXXX")"
cleanup() {
    git -C "$root" worktree remove --force "$scratch/base" >/dev/null 2>&1 || true
    rm -rf "$scratch"
    git -C "$root" worktree prune
}
trap cleanup EXIT

echo "vs-commit: building ${base_sha:0:10} in $scratch/base" >&2
git -C "$root" worktree add --detach -q "$scratch/base" "$base_sha"
(cd "$scratch/base" && mvn -o -q package -DskipTests -pl iomap-cli -am >"$scratch/build.log" 2>&1) \
    || { tail -30 "$scratch/build.log" >&2; echo "vs-commit: the base build failed" >&2; exit 1; }

declare -A args=(
    [overwrite-1k]="--block-size 1k $root/examples/seed-overwrite-1k.fio"
    [seqwrite-128k]="$root/examples/seed-seqwrite-128k.fio"
    [randwrite-4k]="--page-size 64k $root/examples/seed-randwrite-4k.fio"
    [randwrite-4k-dio]="$root/bench/jobs/seed-randwrite-4k-direct.fio"
)
names=(overwrite-1k seqwrite-128k randwrite-4k randwrite-4k-dio)
if [[ -n "$only" ]]; then
    IFS=, read -r -a names <<<"$only"
    for n in "${names[@]}"; do [[ -n "${args[$n]:-}" ]] || { echo "vs-commit: no workload $n" >&2; exit 2; }; done
fi

runs="$scratch/runs.tsv"
: >"$runs"
run_one() { # build-label checkout workload
    local json="$scratch/out.json"
    # shellcheck disable=SC2086
    (cd "$scratch" && "$2/bin/iomap" bench --warmup "$warmup" --progress never --output-format json \
        --output "$json" ${args[$3]}) >"$scratch/run.log" 2>&1 \
        || { tail -20 "$scratch/run.log" >&2; echo "vs-commit: $1 failed on $3" >&2; exit 1; }
    python3 - "$json" "$1" "$3" >>"$runs" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
bw = sum(j["write"]["bw_bytes"] for j in d["jobs"]) / 2**20
wa = d["jobs"][0].get("iomap", {}).get("write_amplification", "")
print(f"{sys.argv[2]}\t{sys.argv[3]}\t{bw:.1f}\t{wa}")
EOF
    tail -1 "$runs" >&2
}

for ((r = 0; r < rounds; r++)); do
    for n in "${names[@]}"; do
        if ((r % 2 == 0)); then
            run_one base "$scratch/base" "$n"; run_one this "$root" "$n"
        else
            run_one this "$root" "$n"; run_one base "$scratch/base" "$n"
        fi
    done
done

table="$(python3 - "$runs" "${base_sha:0:10}" "$this_sha" "$rounds" "$(cut -d' ' -f1-3 /proc/loadavg)" "${names[@]}" <<'EOF'
import statistics, sys
runs, base, this, rounds, load, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
bw, wa = {}, {}
for line in open(runs):
    who, name, b, a = line.rstrip("\n").split("\t")
    bw.setdefault((who, name), []).append(float(b))
    wa[(who, name)] = a
print(f"base {base}, this {this}, {rounds} alternating rounds, median write bandwidth (MiB/s); load average at the end {load}")
print()
print("| workload | base MiB/s | this MiB/s | this/base | base WA | this WA |")
print("|---|---:|---:|---:|---:|---:|")
for n in names:
    b, t = statistics.median(bw[("base", n)]), statistics.median(bw[("this", n)])
    def f(x):
        try:
            return f"{float(x):.3f}"
        except ValueError:
            return x or "-"
    print(f"| {n} | {b:.1f} | {t:.1f} | {t / b:.3f} | {f(wa[('base', n)])} | {f(wa[('this', n)])} |")
EOF
)"
echo "$table"
if [[ -n "$out" ]]; then
    { echo "$table"; echo; echo "# runs: build, workload, write MiB/s, write amplification"; cat "$runs"; } >"$out"
fi
