#!/usr/bin/env bash
# Issue 37's metadata goals: the FUSE mount against ext4 on a loop device, same machine, same minutes.
#
#   create   create + write 4 KiB + close of N files in one directory (python3's os.open/os.write/os.close
#            in one process, so the interpreter's cost is the same on both sides), files/s
#   find-ls  `find DIR -ls` over those N files after the kernel's caches are dropped (sync; echo 3 >
#            /proc/sys/vm/drop_caches: dentries, inodes and pages; iomap4j's own cache stays, as it does
#            in a running mount), files/s
# Alternating rounds; medians; the ratio is FUSE / ext4 (the goal: 0.8x or more).
#
# Usage: bench/metadata-vs-ext4.sh [--jar JAR] [--files N] [--rounds N] [--dir DIR] [--fuse-args "ARGS"]
#   --jar JAR         the iomap.jar to mount with (default iomap-cli/target/iomap.jar)
#   --files N         files per round (default 10000)
#   --rounds N        rounds (default 3)
#   --dir DIR         where the two sparse images and mount points go (default bench/work-metadata; deleted)
#   --fuse-args ARGS  more `iomap mount` options
# Needs root (losetup, mount, drop_caches), e2fsprogs, fuse3, python3. Measures time: run it on a quiet
# machine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jar=iomap-cli/target/iomap.jar
files=10000
rounds=3
dir=bench/work-metadata
fuse_args=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --jar) jar=$2; shift 2 ;;
        --files) files=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --fuse-args) fuse_args=$2; shift 2 ;;
        *) echo "metadata-vs-ext4: unknown option $1" >&2; exit 2 ;;
    esac
done
jar=$(realpath "$jar")
java="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mkdir -p "$dir/ext4" "$dir/fuse"
loop=""
mount_pid=""
cleanup() {
    if [[ -n "$mount_pid" ]]; then
        fusermount3 -u "$dir/fuse" 2>/dev/null || true
        wait "$mount_pid" 2>/dev/null || true
    fi
    if mountpoint -q "$dir/ext4"; then
        umount "$dir/ext4" || true
    fi
    if [[ -n "$loop" ]]; then
        losetup -d "$loop" || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT

truncate -s 1G "$dir/ext4.img"
mkfs.ext4 -q -F "$dir/ext4.img"
loop=$(losetup -f --show "$dir/ext4.img")
mount "$loop" "$dir/ext4"
"$java" --enable-native-access=ALL-UNNAMED -jar "$jar" mkfs --size 1g "$dir/fuse.img" >/dev/null 2>&1
# shellcheck disable=SC2086 # fuse_args is a list of options
"$java" --enable-native-access=ALL-UNNAMED -jar "$jar" mount "$dir/fuse.img" "$dir/fuse" $fuse_args \
    2>"$dir/mount.log" &
mount_pid=$!
for _ in $(seq 1 300); do
    grep -q " $dir/fuse fuse" /proc/mounts && break
    sleep 0.1
done
grep -q " $dir/fuse fuse" /proc/mounts || { cat "$dir/mount.log" >&2; exit 1; }

create() { # DIR -> files/s
    python3 - "$1" "$files" <<'PY'
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
data = b"x" * 4096
start = time.perf_counter()
for i in range(n):
    fd = os.open(f"{d}/f{i}", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.close(fd)
print(f"{n / (time.perf_counter() - start):.0f}")
PY
}

find_ls() { # DIR -> files/s
    sync
    echo 3 > /proc/sys/vm/drop_caches
    local start end
    start=$(date +%s.%N)
    find "$1" -ls > /dev/null
    end=$(date +%s.%N)
    python3 -c "print(f'{$files / ($end - $start):.0f}')"
}

results=()
for round in $(seq 1 "$rounds"); do
    order="ext4 fuse"
    (( round % 2 == 0 )) && order="fuse ext4"
    for system in $order; do
        mkdir "$dir/$system/t"
        results+=("create $system $(create "$dir/$system/t")")
        results+=("find-ls $system $(find_ls "$dir/$system/t")")
        rm -rf "$dir/$system/t"
    done
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = {}
for line in sys.stdin:
    workload, system, rate = line.split()
    rows.setdefault((workload, system), []).append(float(rate))
print(f"# metadata-vs-ext4: {sys.argv[1]} files, medians of {sys.argv[2]} rounds (files/s)")
print("| workload | ext4 | FUSE | FUSE / ext4 |")
print("|---|---:|---:|---:|")
for w in ("create", "find-ls"):
    ext4 = statistics.median(rows[(w, "ext4")])
    fuse = statistics.median(rows[(w, "fuse")])
    print(f"| {w} | {ext4:.0f} | {fuse:.0f} | {fuse / ext4:.2f}x |")
' "$files" "$rounds"
