#!/usr/bin/env bash
# Peak resident memory of iomap4j under a large sequential write and read back, against the goal
# "peak RSS <= cache budget + 256 MiB". Two runs, each a fresh JVM started by bin/iomap:
#   fuse  - bin/iomap mount of a sparse xfs-like image; dd writes SIZE MiB of zeroes (conv=fsync)
#           into it and reads them back; then VmHWM/VmRSS of the mount JVM (from /proc/PID/status)
#   bench - bin/iomap bench on a sparse file device (--device file:...): one fio job file, a
#           sequential 1 MiB write of SIZE MiB (end_fsync) then, stonewalled, a read of the same file
# Zeroes are fine: no layer special-cases zero data (the write path copies every byte into folios).
#
# Usage: memory-peak.sh [CHECKOUT]   (default: the checkout this script sits in, i.e. ..)
#   CHECKOUT must be built first (mvn -q package -DskipTests leaves iomap-cli/target/iomap.jar).
# Environment:
#   IOMAP_JAVA_OPTS         extra JVM options, passed through bin/iomap (e.g. -Xmx512m,
#                           -XX:NativeMemoryTracking=summary: then the NMT summary of the mount JVM
#                           is printed too)
#   IOMAP_JAVA_HOME         the Java 25 bin/iomap runs (default /usr/lib/jvm/temurin-25-jdk-amd64)
#   MEMORY_PEAK_BUDGET      cache budget, e.g. 512m, passed as --set cacheBudgetBytes=...
#                           (default: unset, the mount's default of 256 MiB)
#   MEMORY_PEAK_SIZE_MIB    data written and read per run (default 2048)
#   MEMORY_PEAK_RUNS        which runs: "fuse bench" (default), "fuse" or "bench"
#   MEMORY_PEAK_TMP         parent of the temporary directory (default /tmp); images are sparse
#                           and deleted at the end, also on failure
# Needs fuse3 (fusermount3, /dev/fuse) for the fuse run.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
checkout="$(cd "${1:-$script_dir/..}" && pwd)"
iomap="$checkout/bin/iomap"
java_home="${IOMAP_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
size_mib="${MEMORY_PEAK_SIZE_MIB:-2048}"
runs="${MEMORY_PEAK_RUNS:-fuse bench}"
budget_text="${MEMORY_PEAK_BUDGET:-}"
slack_mib=256

die() { echo "memory-peak: $*" >&2; exit 1; }
[[ -x "$iomap" ]] || die "no bin/iomap in $checkout"
[[ -f "$checkout/iomap-cli/target/iomap.jar" ]] || die "$checkout is not built: mvn -q package -DskipTests"
[[ -x "$java_home/bin/java" ]] || die "no Java at $java_home; set IOMAP_JAVA_HOME"

# The cache budget in MiB, and the option that sets it (none for the default).
set_opts=()
if [[ -n "$budget_text" ]]; then
    set_opts=(--set "cacheBudgetBytes=$budget_text")
    budget_mib=$(numfmt --from=iec "${budget_text^^}" | awk '{ printf "%d", $1 / 1048576 }')
else
    budget_mib=256
fi
goal_mib=$((budget_mib + slack_mib))

tmp="$(mktemp -d "${MEMORY_PEAK_TMP:-/tmp}/memory-peak.XXXXXX")"
mnt="$tmp/mnt"
mount_pid=""
bench_pid=""

cleanup() {
    local rc=$?
    set +e
    if mountpoint -q "$mnt" 2>/dev/null; then
        fusermount3 -u "$mnt" 2>/dev/null || { sleep 1; fusermount3 -u "$mnt" 2>/dev/null; }
    fi
    for pid in $mount_pid $bench_pid; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null
            for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
        fi
    done
    if mountpoint -q "$mnt" 2>/dev/null; then
        fusermount3 -uz "$mnt" 2>/dev/null
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# status_kib PID FIELD: a field of /proc/PID/status in KiB (empty once the process is gone).
status_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || true; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

# assert_java PID: bin/iomap execs java, so the background job's PID is the JVM's own.
assert_java() {
    local exe
    exe="$(readlink "/proc/$1/exe" 2>/dev/null || true)"
    [[ "$exe" == */bin/java ]] || die "PID $1 is $exe, not java"
}

rows=()
details=()

# row NAME HWM_KIB RSS_KIB
row() {
    local peak final within
    peak=$(mib "$2")
    final=$(mib "$3")
    within=no
    ((peak <= goal_mib)) && within=yes
    rows+=("| $1 | $budget_mib MiB | $peak | $final | $goal_mib MiB | $within |")
}

run_fuse() {
    command -v fusermount3 >/dev/null || die "fusermount3 missing: apt-get install -y fuse3"
    local image="$tmp/fuse.img" log="$tmp/mount.log"
    local image_mib=$((size_mib + size_mib / 2 + 512))
    mkdir -p "$mnt"
    "$iomap" mkfs --adapter xfs-like --size "${image_mib}m" "$image" >/dev/null
    "$iomap" mount -f --adapter xfs-like "${set_opts[@]}" "$image" "$mnt" >"$log" 2>&1 &
    mount_pid=$!
    for _ in $(seq 1 300); do
        mountpoint -q "$mnt" && break
        kill -0 "$mount_pid" 2>/dev/null || { cat "$log" >&2; die "mount exited"; }
        sleep 0.1
    done
    mountpoint -q "$mnt" || { cat "$log" >&2; die "not mounted after 30 s"; }
    assert_java "$mount_pid"
    max_heap_fuse="$(max_heap_of "$mount_pid")"

    dd if=/dev/zero of="$mnt/big" bs=1M count="$size_mib" conv=fsync status=none
    dd if="$mnt/big" of=/dev/null bs=1M status=none
    local hwm rss
    hwm=$(status_kib "$mount_pid" VmHWM)
    rss=$(status_kib "$mount_pid" VmRSS)
    row "fuse (dd ${size_mib} MiB write+fsync, read)" "$hwm" "$rss"
    details+=("### fuse: jcmd GC.heap_info (after the read)" "$(jcmd_of "$mount_pid" GC.heap_info)"
        "GC invocations (young, old/full): $(jcmd_of "$mount_pid" PerfCounter.print \
            | awk -F= '/^sun\.gc\.collector\.[01]\.invocations=/ { printf "%s ", $2 }')")
    if [[ "${IOMAP_JAVA_OPTS:-}" == *NativeMemoryTracking=* ]]; then
        details+=("### fuse: jcmd VM.native_memory summary (after the read)"
            "$(jcmd_of "$mount_pid" VM.native_memory summary scale=MB)")
    fi

    fusermount3 -u "$mnt"
    local status=0
    wait "$mount_pid" || status=$?
    mount_pid=""
    ((status == 0)) || { cat "$log" >&2; die "mount exited with $status"; }
}

run_bench() {
    local job="$tmp/seq-write-read.fio" out="$tmp/bench.out"
    cat >"$job" <<EOF
; ${size_mib} MiB sequential 1 MiB writes with a final fsync, then the same file read back.
[global]
ioengine=psync
bs=1m
size=${size_mib}m
filename=big

[write]
rw=write
end_fsync=1

[read]
stonewall
rw=read
EOF
    "$iomap" bench --adapter xfs-like --device "file:$tmp/bench.img" --progress=never "${set_opts[@]}" \
        "$job" >"$out" 2>&1 &
    bench_pid=$!
    local hwm="" rss="" h r
    sleep 0.2
    assert_java "$bench_pid"
    max_heap_bench="$(max_heap_of "$bench_pid")"
    # Poll: VmHWM only grows, and the last VmRSS seen is the one at the end of the run.
    while kill -0 "$bench_pid" 2>/dev/null; do
        h=$(status_kib "$bench_pid" VmHWM)
        r=$(status_kib "$bench_pid" VmRSS)
        if [[ -n "$h" && -n "$r" ]]; then hwm=$h; rss=$r; fi
        sleep 0.2
    done
    local status=0
    wait "$bench_pid" || status=$?
    bench_pid=""
    ((status == 0)) || { cat "$out" >&2; die "bench exited with $status"; }
    row "bench (file device, ${size_mib} MiB write+fsync, read)" "$hwm" "$rss"
    details+=("### bench: bandwidth" "$(grep -E '^ *(WRITE|READ):' "$out" | sed 's/^ *//')")
}

jcmd_of() { "$java_home/bin/jcmd" "$@" 2>&1 | tail -n +2; }

max_heap_of() {
    "$java_home/bin/jcmd" "$1" VM.flags 2>/dev/null | tr ' ' '\n' \
        | awk -F= '$1 == "-XX:MaxHeapSize" { printf "%.0f MiB", $2 / 1048576 }'
}

max_heap_fuse=""
max_heap_bench=""
for run in $runs; do
    case "$run" in
        fuse) run_fuse ;;
        bench) run_bench ;;
        *) die "unknown run '$run' (fuse, bench)" ;;
    esac
done

echo "## memory-peak: $(git -C "$checkout" rev-parse --short HEAD 2>/dev/null || echo '?') ($checkout), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(free -m | awk '/^Mem:/ { print $2 }') MiB RAM"
echo
echo "JVM options: bin/iomap's defaults ($(grep -o -- '-Xmx[^ ]* -XX:+[A-Za-z]*' "$iomap" | head -1)) then IOMAP_JAVA_OPTS='${IOMAP_JAVA_OPTS:-}'"
echo "Effective max heap (MaxHeapSize): fuse ${max_heap_fuse:-n/a}, bench ${max_heap_bench:-n/a}"
echo
echo "| run | cache budget | peak RSS (VmHWM) MiB | final RSS MiB | budget + $slack_mib MiB goal | within goal? |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
printf '%s\n' "${details[@]}"
