#!/usr/bin/env bash
# Issue 37: what one request through the FUSE mount costs, in microseconds.
#
# A request of a 4 KiB O_DIRECT read or write at queue depth 1 (fio psync, one job) is exactly one FUSE
# request (READ or WRITE) and nothing else: the file is opened once, and the data is already in
# iomap4j's cache (read once first; the writes overwrite it). So fio's completion latency of such a job
# on the mount is the round trip of one request: the caller's system call, the kernel queueing the
# request, a worker's wake-up and read of /dev/fuse, our handling (an upcall, a copy into or out of the
# page cache), the reply's writev, and the caller's wake-up. The same job in process (`iomap bench` on a
# RAM device, the same cache hits without the kernel) gives what the engine itself takes; the
# difference is the mount's per-request overhead. p50 and p99 of each, medians over the rounds.
#
# Usage: bench/fuse-request-cost.sh [--jar JAR] [--label NAME] [--rounds N] [--runtime SEC] [--dir DIR]
#   --jar JAR      the iomap.jar to measure (default iomap-cli/target/iomap.jar): give an older build's
#                  jar to measure before and after in the same minutes
#   --label NAME   the name printed in the table (default: the jar's file name)
#   --rounds N     rounds (default 3); --runtime SEC each job's measured time (default 10, 2 s ramp)
#   --dir DIR      where the image and mount point go (default bench/work-request-cost; deleted after)
# Needs root (allow_other is not needed: fio runs as the mounting user), fuse3 and fio.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jar=iomap-cli/target/iomap.jar
label=""
rounds=3
runtime=10
dir=bench/work-request-cost
while [[ $# -gt 0 ]]; do
    case $1 in
        --jar) jar=$2; shift 2 ;;
        --label) label=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --runtime) runtime=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        *) echo "fuse-request-cost: unknown option $1" >&2; exit 2 ;;
    esac
done
label=${label:-$(basename "$jar")}
jar=$(realpath "$jar")
java="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
iomap() { "$java" --enable-native-access=ALL-UNNAMED -jar "$jar" "$@"; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mnt="$dir/mnt"
mkdir -p "$mnt"
mount_pid=""
cleanup() {
    if [[ -n "$mount_pid" ]]; then
        fusermount3 -u "$mnt" 2>/dev/null || true
        wait "$mount_pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT

job() { # RW: a 4 KiB O_DIRECT psync job over a 64 MiB file, one request at a time
    cat <<EOF
[global]
ioengine=psync
direct=1
bs=4k
size=64m
filename=cost.dat
time_based=1
ramp_time=2
runtime=${runtime}
numjobs=1
[cost]
rw=$1
EOF
}

percentiles() { # JSON RW -> "p50 p99" of the completion latency in us
    python3 - "$1" "$2" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
side = "read" if sys.argv[2] == "randread" else "write"
pct = job[side]["clat_ns"]["percentile"]
print(f'{pct["50.000000"] / 1000:.1f} {pct["99.000000"] / 1000:.1f}')
PY
}

iomap mkfs --size 256m "$dir/cost.img" >/dev/null
iomap mount "$dir/cost.img" "$mnt" 2>"$dir/mount.log" &
mount_pid=$!
for _ in $(seq 1 300); do
    grep -q " $mnt fuse" /proc/mounts && break
    sleep 0.1
done
grep -q " $mnt fuse" /proc/mounts || { cat "$dir/mount.log" >&2; exit 1; }
dd if=/dev/urandom of="$mnt/cost.dat" bs=1M count=64 status=none
cat "$mnt/cost.dat" > /dev/null
results=()
for rw in randread randwrite; do
    job "$rw" > "$dir/$rw.fio"
    for round in $(seq 1 "$rounds"); do
        (cd "$mnt" && fio --output-format=json --output="$dir/$rw.$round.json" "$dir/$rw.fio")
        results+=("$rw fuse $(percentiles "$dir/$rw.$round.json" "$rw")")
        (cd "$dir" && iomap bench --progress=never --warmup 1 --device ram:512m --output-format=json --output "$dir/$rw.$round.ours.json" \
            "$dir/$rw.fio" >/dev/null 2>"$dir/bench.log") || { echo "iomap bench failed:" >&2; cat "$dir/bench.log" >&2; }
        if [[ -s "$dir/$rw.$round.ours.json" ]]; then
            results+=("$rw ours $(percentiles "$dir/$rw.$round.ours.json" "$rw")")
        fi
    done
done
fusermount3 -u "$mnt"
wait "$mount_pid"
mount_pid=""
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
label, rounds = sys.argv[1], sys.argv[2]
rows = {}
for line in sys.stdin:
    rw, system, p50, p99 = line.split()
    rows.setdefault((rw, system), []).append((float(p50), float(p99)))
print(f"# fuse-request-cost {label}: 4 KiB O_DIRECT psync, queue depth 1, medians of {rounds} rounds (us)")
print("| request | mount p50 | mount p99 | in process p50 | in process p99 | overhead p50 | overhead p99 |")
print("|---|---:|---:|---:|---:|---:|---:|")
for rw in ("randread", "randwrite"):
    fuse = rows.get((rw, "fuse"), [])
    ours = rows.get((rw, "ours"), [])
    m = lambda vals, i: statistics.median(v[i] for v in vals) if vals else float("nan")
    print(f"| {rw}-4k | {m(fuse, 0):.1f} | {m(fuse, 1):.1f} | {m(ours, 0):.1f} | {m(ours, 1):.1f} |"
          f" {m(fuse, 0) - m(ours, 0):.1f} | {m(fuse, 1) - m(ours, 1):.1f} |")
' "$label" "$rounds"
