#!/usr/bin/env bash
# Issue 19: iomap4j against the kernel on the same disk, side by side, in one run.
#
# For each workload, in alternating rounds, three runs in the same directory (--dir, on the host
# filesystem):
#   kernel  real fio on the host filesystem (the host's page cache and filesystem)
#   ours    `iomap bench` in process on a file device (a sparse image in --dir)
#   fuse    real fio on a FUSE mount (`bin/iomap mount`) of an image in --dir (made by `iomap mkfs`)
# and one table: bandwidth, IOPS, completion latency p50/p99 (medians over the rounds), the ratios
# ours/kernel and fuse/kernel (of the bandwidth), and the write amplification of ours (device bytes
# written / bytes the application wrote, from the bench's own counters).
#
# Workloads: the seeds' three jobs (examples/seed-*.fio: overwrite-1k, seqwrite-128k,
# randwrite-4k), 1 MiB sequential read cold and warm, 4 KiB random read cold and warm, a 70/30 4 KiB
# random read/write mix with an fdatasync every 32 writes, and the random-write seed with numjobs 1,
# 2, 4 and 8. Cold: for the kernel and FUSE the files are laid out first (fio --create_only=1), the
# host's caches are dropped (sync; echo 3 > /proc/sys/vm/drop_caches; needs root) and, for FUSE, the
# image is mounted afresh; for ours the bench drops its clean cache after laying out (fio's
# invalidate=1), the same as a fresh mount. Warm: pre_read=1 (the files are read in first).
#
# Usage: bench/vs-kernel.sh [options]   (after building iomap-cli/target/iomap.jar)
#   --dir DIR         where files, images and the mount point go (default bench/work-vs-kernel;
#                     created, and deleted at the end)
#   --size SIZE       file size of the sequential jobs (default 256m)
#   --rand-size SIZE  file size of the random-read and mix jobs (default 64m)
#   --rw-size SIZE    per-job file size of the random-write seed and its numjobs variants (default 4m)
#   --runtime SEC     cap (and time_based length) of each run (default 5)
#   --ramp SEC        ramp_time of the time-based runs (default 1): run, unmeasured, before the
#                     measured runtime, for all three systems alike (warms ours' JIT; the kernel
#                     needs none). The random-write seed and its numjobs variants run time_based
#                     with it: size-bound, 4 MiB of 4 KiB writes was ~0.3 s, mostly warm-up for a JVM.
#                     So does the warm 1 MiB read: one pass over 256 MiB of cache is ~15 ms, which
#                     measured the first touch of the reader's buffer and the JIT, not the copy
#   --rounds N        alternating rounds (default 1)
#   --warmup N        ours and FUSE (default 1): the job runs N times first, unmeasured, so that the
#                     measured run meets a warm JIT, as a long-running mount would. Ours:
#                     `iomap bench --warmup N` (on a RAM device; the image itself is fresh). FUSE: on
#                     the measured mount, in a directory of its own that is deleted before the measured
#                     run (cold runs drop the host's caches after it; the measured file was never read).
#                     0 measures a cold JVM. The kernel needs none
#   --only LIST       comma list of workload names (default: all; see WORKLOADS below)
#   --no-fuse         leave out the FUSE runs
#   --prealloc MODE   off (default): the images of ours and FUSE are sparse; full: zeroes are written
#                     over each image before it is formatted (`,prealloc=full` for ours, `mkfs
#                     --preallocate` for FUSE), so that the host holds it written and O_DIRECT writes
#                     are overwrites there, as on a disk. Costs each image's size on disk while it runs
#   --ours-device-opts OPTS   appended to --device file:IMAGE, e.g. ,cache=host
#   --ours-args "ARGS"        more `iomap bench` options, e.g. "--set maxIoendBytes=4m"
#   --fuse-args "ARGS"        more `iomap mount` options, e.g. "--kernel-cache -o writeback_cache"
#   --out FILE        also write the table (and the raw per-run lines) to FILE
#   --report FILE     also write an HTML report with charts to FILE: the ratios to the kernel as a bar
#                     chart, bandwidth and latency p50/p99 per workload, the table (one file, opens offline)
# A quick run (the defaults) takes a few minutes. Images are sparse; every file, image and mount is
# removed and unmounted at the end, also on failure or Ctrl-C.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
args="$*"

dir=bench/work-vs-kernel
size=256m
rand_size=64m
rw_size=4m
runtime=5
ramp=1
warmup=1
rounds=1
only=""
fuse=1
ours_device_opts=""
ours_args=""
fuse_args=""
prealloc=off
out=""
report=""
WORKLOADS="overwrite-1k seqwrite-128k randwrite-4k seqread-1m-cold seqread-1m-warm randread-4k-cold"
WORKLOADS+=" randread-4k-warm randrw-70-30-fdatasync32 randwrite-4k-nj1 randwrite-4k-nj2 randwrite-4k-nj4 randwrite-4k-nj8"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --dir) dir=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --rand-size) rand_size=$2; shift 2 ;;
        --rw-size) rw_size=$2; shift 2 ;;
        --runtime) runtime=$2; shift 2 ;;
        --ramp) ramp=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --no-fuse) fuse=0; shift ;;
        --ours-device-opts) ours_device_opts=$2; shift 2 ;;
        --ours-args) ours_args=$2; shift 2 ;;
        --fuse-args) fuse_args=$2; shift 2 ;;
        --prealloc) prealloc=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --report) report=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "vs-kernel: unknown option $1" >&2; usage 2 >&2 ;;
    esac
done
if [[ -n "$only" ]]; then
    for w in ${only//,/ }; do
        [[ " $WORKLOADS " == *" $w "* ]] || { echo "vs-kernel: no workload $w (have: $WORKLOADS)" >&2; exit 2; }
    done
    WORKLOADS=${only//,/ }
fi
case "$prealloc" in
    off) ours_prealloc=""; mkfs_prealloc="" ;;
    full) ours_prealloc=",prealloc=full"; mkfs_prealloc="--preallocate" ;;
    *) echo "vs-kernel: --prealloc is off or full, not $prealloc" >&2; exit 2 ;;
esac
command -v fio >/dev/null || { echo "vs-kernel: fio is missing (apt-get install -y fio)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "vs-kernel: python3 is missing" >&2; exit 1; }
[[ -f iomap-cli/target/iomap.jar ]] || { echo "vs-kernel: build first: mvn -q package -DskipTests" >&2; exit 1; }
if [[ $fuse == 1 ]] && ! command -v fusermount3 >/dev/null; then
    echo "vs-kernel: fusermount3 is missing (apt-get install -y fuse3); or give --no-fuse" >&2; exit 1
fi

work="$(mkdir -p "$dir" && cd "$dir" && pwd)"
mnt="$work/mnt"
mount_pid=""
cleanup() {
    local rc=$?
    if [[ -n "$mount_pid" ]]; then
        fusermount3 -u "$mnt" 2>/dev/null || true
        kill -TERM "$mount_pid" 2>/dev/null || true
        wait "$mount_pid" 2>/dev/null || true
        mount_pid=""
    fi
    if grep -q " $mnt fuse" /proc/mounts 2>/dev/null; then
        fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
    fi
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$work/jobs" "$work/host" "$work/json" "$mnt"
results="$work/results.tsv"
: > "$results"

drop_caches() {
    sync
    if ! echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then
        echo "vs-kernel: cannot drop the host's caches (not root?): the cold runs are not cold" >&2
    fi
}

# --- job files -------------------------------------------------------------------------------------
# seed copies without dir= (each run is in its own directory), with overrides appended to the job
seed_job() { # SEED OVERRIDES...
    local seed=$1; shift
    grep -v -E '^\s*(dir|directory)\s*=' "examples/$seed.fio"
    printf '\t%s\n' "$@"
}
make_job() { # NAME -> jobs/NAME.fio
    local name=$1 f="$work/jobs/$1.fio"
    case "$name" in
        overwrite-1k) seed_job seed-overwrite-1k "runtime=$runtime" "ramp_time=$ramp" > "$f" ;;
        seqwrite-128k) seed_job seed-seqwrite-128k "size=$size" > "$f" ;;
        randwrite-4k) seed_job seed-randwrite-4k "size=$rw_size" "runtime=$runtime" time_based=1 "ramp_time=$ramp" > "$f" ;;
        randwrite-4k-nj*) seed_job seed-randwrite-4k "size=$rw_size" "runtime=$runtime" time_based=1 "ramp_time=$ramp" \
            "numjobs=${name#randwrite-4k-nj}" > "$f" ;;
        seqread-1m-*|randread-4k-*|randrw-70-30-fdatasync32)
            {
                printf '[global]\nioengine=psync\ndirect=0\ngroup_reporting=1\nruntime=%s\n' "$runtime"
                case "$name" in
                    seqread-1m-cold) printf 'rw=read\nbs=1m\nsize=%s\n' "$size" ;;
                    seqread-1m-warm) printf 'rw=read\nbs=1m\nsize=%s\ntime_based=1\nramp_time=%s\n' "$size" "$ramp" ;;
                    randread-4k-cold) printf 'rw=randread\nbs=4k\nsize=%s\n' "$rand_size" ;;
                    randread-4k-warm) printf 'rw=randread\nbs=4k\nsize=%s\ntime_based=1\nramp_time=%s\n' "$rand_size" "$ramp" ;;
                    randrw-*) printf 'rw=randrw\nrwmixread=70\nbs=4k\nfdatasync=32\nsize=%s\ntime_based=1\nramp_time=%s\n' "$rand_size" "$ramp" ;;
                esac
                case "$name" in
                    *-warm) printf 'pre_read=1\ninvalidate=0\n' ;;
                    *) printf 'invalidate=1\n' ;;
                esac
                printf '[%s]\n' "$name"
            } > "$f" ;;
        *) echo "vs-kernel: no job for $name" >&2; exit 1 ;;
    esac
}
is_cold() { [[ $1 == *-cold ]]; }

# --- one JSON report -> "MiB/s IOPS p50_us p99_us WA" ----------------------------------------------
summarize() { # JSONFILE
    python3 - "$1" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text[text.index('{'):])   # fio may print notes before the JSON
jobs = doc["jobs"]
bw = sum(j[d]["bw_bytes"] for j in jobs for d in ("read", "write"))
iops = sum(j[d]["iops"] for j in jobs for d in ("read", "write"))
ios = {d: sum(j[d]["total_ios"] for j in jobs) for d in ("read", "write")}
main = max(ios, key=ios.get)
def pct(j, p):
    return j[main]["clat_ns"].get("percentile", {}).get(p, 0)
heavy = [j for j in jobs if j[main]["total_ios"] > 0] or jobs
p50 = max(pct(j, "50.000000") for j in heavy) / 1000
p99 = max(pct(j, "99.000000") for j in heavy) / 1000
counters = jobs[0].get("iomap", {})
wa = counters.get("write_amplification") if counters.get("app_bytes_written") else None
print(f"{bw / 2**20:.1f}\t{iops:.0f}\t{p50:.1f}\t{p99:.1f}\t{'-' if wa is None else f'{wa:.3f}'}")
PY
}
record() { # WORKLOAD ROUND SYSTEM JSON
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(summarize "$4")" >> "$results"
    tail -n 1 "$results" >&2
}

# --- the three systems -----------------------------------------------------------------------------
run_kernel() { # WORKLOAD ROUND
    local job="$work/jobs/$1.fio" json="$work/json/$1.$2.kernel.json" d="$work/host/$1"
    mkdir -p "$d"
    if is_cold "$1"; then
        (cd "$d" && fio --create_only=1 "$job" >/dev/null)
        drop_caches
    fi
    (cd "$d" && fio --output-format=json --output="$json" "$job")
    rm -rf "$d"
    record "$1" "$2" kernel "$json"
}

run_ours() { # WORKLOAD ROUND
    local json="$work/json/$1.$2.ours.json" img="$work/ours.img"
    rm -f "$img"
    drop_caches
    # shellcheck disable=SC2086 # ours_args is a list of options
    bin/iomap bench --progress=never --warmup "$warmup" --device "file:$img$ours_prealloc$ours_device_opts" $ours_args \
        --output-format=json --output "$json" "$work/jobs/$1.fio"
    rm -f "$img"
    record "$1" "$2" ours "$json"
}

mount_image() { # IMAGE
    # shellcheck disable=SC2086 # fuse_args is a list of options
    bin/iomap mount "$1" "$mnt" $fuse_args 2>>"$work/mount.log" &
    mount_pid=$!
    for _ in $(seq 1 300); do
        if grep -q " $mnt fuse" /proc/mounts; then
            return 0
        fi
        if ! kill -0 "$mount_pid" 2>/dev/null; then
            echo "vs-kernel: iomap mount failed:" >&2; cat "$work/mount.log" >&2; mount_pid=""; exit 1
        fi
        sleep 0.1
    done
    echo "vs-kernel: $mnt not mounted after 30 s" >&2
    exit 1
}
unmount_image() {
    fusermount3 -u "$mnt"
    wait "$mount_pid"
    mount_pid=""
}

warm_fuse() { # JOB: run it --warmup times in a directory of the mount of its own, then delete that
    local i
    for (( i = 0; i < warmup; i++ )); do
        mkdir "$mnt/warmup"
        (cd "$mnt/warmup" && fio --output=/dev/null "$1")
        rm -rf "$mnt/warmup"
    done
}

run_fuse() { # WORKLOAD ROUND
    local job="$work/jobs/$1.fio" json="$work/json/$1.$2.fuse.json" img="$work/fuse.img"
    rm -f "$img"
    # shellcheck disable=SC2086 # mkfs_prealloc is empty or one option
    bin/iomap mkfs $mkfs_prealloc --size "$image_size" "$img" >/dev/null
    mount_image "$img"
    if is_cold "$1"; then
        (cd "$mnt" && fio --create_only=1 "$job" >/dev/null)
        unmount_image
        drop_caches
        mount_image "$img"
    fi
    warm_fuse "$job"
    if is_cold "$1"; then
        drop_caches
    fi
    (cd "$mnt" && fio --output-format=json --output="$json" "$job")
    unmount_image
    rm -f "$img"
    record "$1" "$2" fuse "$json"
}

bytes() { python3 -c 'import sys; s=sys.argv[1].lower(); m={"k":1<<10,"m":1<<20,"g":1<<30}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))' "$1"; }
image_size=$(( 2 * $(bytes "$size") + 8 * 2 * $(bytes "$rw_size") + (512 << 20) ))

echo "# vs-kernel $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores $(uname -r), $(df -T "$work" | awk 'NR == 2 { print $2 " on " $1 }')," \
     "size=$size rand-size=$rand_size rw-size=$rw_size runtime=${runtime}s ramp=${ramp}s warmup=$warmup rounds=$rounds prealloc=$prealloc; uptime: $(uptime)" > "$work/header.txt"
echo "  command: bench/vs-kernel.sh $args" >> "$work/header.txt"
cat "$work/header.txt" >&2
for w in $WORKLOADS; do
    make_job "$w"
done
for round in $(seq 1 "$rounds"); do
    for w in $WORKLOADS; do
        # alternate which system goes first, round by round
        order="kernel ours fuse"
        (( round % 2 == 0 )) && order="fuse ours kernel"
        for system in $order; do
            [[ $system == fuse && $fuse == 0 ]] && continue
            "run_$system" "$w" "$round"
        done
    done
done
echo "# done $(date -u +%H:%MZ); uptime: $(uptime)" >> "$work/header.txt"

python3 - "$results" "$work/header.txt" <<'PY' | tee "$work/table.txt"
import statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
print(open(sys.argv[2]).read().rstrip())
med = {}
order = []
for w, rnd, system, bw, iops, p50, p99, wa in rows:
    if w not in order:
        order.append(w)
    med.setdefault((w, system), []).append((float(bw), float(iops), float(p50), float(p99), wa))
def m(vals, i):
    return statistics.median(v[i] for v in vals)
print()
print("| workload | system | MiB/s | IOPS | p50 us | p99 us | / kernel | WA |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for w in order:
    kernel = med.get((w, "kernel"))
    for system in ("kernel", "ours", "fuse"):
        vals = med.get((w, system))
        if not vals:
            continue
        bw = m(vals, 0)
        ratio = f"{bw / m(kernel, 0):.2f}x" if kernel and m(kernel, 0) > 0 else "-"
        was = [v[4] for v in vals if v[4] != "-"]
        wa = f"{statistics.median(float(x) for x in was):.3f}" if was else "-"
        print(f"| {w} | {system} | {bw:.1f} | {m(vals, 1):.0f} | {m(vals, 2):.1f} | {m(vals, 3):.1f} | {ratio} | {wa} |")
print()
print("rounds per cell:", max(len(v) for v in med.values()) if med else 0,
      "(median shown); ratio = MiB/s of the row / MiB/s of kernel")
PY
if [[ -n "$out" ]]; then
    { cat "$work/table.txt"; echo; echo "raw: workload round system MiB/s IOPS p50us p99us WA"; cat "$results"; } > "$out"
fi
if [[ -n "$report" ]]; then
    bin/iomap report vs-kernel "$results" --header "$work/header.txt" --output "$report"
    echo "vs-kernel: report in $report" >&2
fi
