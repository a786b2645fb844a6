#!/usr/bin/env bash
# Wall time and peak resident memory of the xfs-like image commands on a large sparse image (issue 12:
# "a 16 TiB sparse image formats in seconds with memory that does not grow with the device"). For
# each size, each step a fresh JVM started by bin/iomap (its default -Xmx256m), measured with
# /usr/bin/time -v:
#   mkfs      bin/iomap mkfs --size=SIZE IMAGE   (formats, then mounts once to print statfs)
#   fsck      bin/iomap fsck IMAGE
#   stat      bin/iomap stat IMAGE               (mount, statfs, unmount)
#   write     bin/iomap mount IMAGE MNT in the background (FUSE); a directory of 100 4 KiB files
#             and a 64 MiB file written with dd conv=fsync; fusermount3 -u; the row is the mount
#             JVM's whole life, from start to the clean unmount (skipped without /dev/fuse)
#   fsck      again, after the writes
# and the image's allocated bytes (du) after each step. The image is deleted at the end, also on
# failure.
#
# Usage: scale-16t.sh [CHECKOUT]   (default: the checkout this script sits in, i.e. ..)
#   CHECKOUT must be built first: mvn -B -o -q package -pl iomap-cli -am -DskipTests leaves
#   iomap-cli/target/iomap.jar, which bin/iomap runs.
# Environment:
#   SCALE_SIZES      image sizes, as --size takes them (default "16t")
#   SCALE_TMP        where the image goes (default /tmp). ext4 holds files of at most 16 TiB less
#                    4 KiB, so when a sparse file of the size cannot be made there the script says
#                    so and uses /dev/shm (tmpfs, which holds sparse files of any size; only the
#                    blocks written take memory)
#   SCALE_WRITE      0 to skip the FUSE write step (default 1)
#   IOMAP_JAVA_HOME, IOMAP_JAVA_OPTS   as for bin/iomap
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
checkout="$(cd "${1:-$script_dir/..}" && pwd)"
iomap="$checkout/bin/iomap"
sizes="${SCALE_SIZES:-16t}"
write_step="${SCALE_WRITE:-1}"

die() { echo "scale-16t: $*" >&2; exit 1; }
[[ -x "$iomap" ]] || die "no bin/iomap in $checkout"
[[ -f "$checkout/iomap-cli/target/iomap.jar" ]] || die "$checkout is not built (iomap-cli/target/iomap.jar)"
if [[ ! -x /usr/bin/time ]]; then
    echo "scale-16t: installing GNU time (/usr/bin/time)" >&2
    apt-get install -y -q time >/dev/null || die "/usr/bin/time missing: apt-get install -y time"
fi

tmp=""
mount_pid=""
cleanup() {
    local rc=$?
    set +e
    if [[ -n "$tmp" ]] && mountpoint -q "$tmp/mnt" 2>/dev/null; then
        fusermount3 -u "$tmp/mnt" 2>/dev/null || fusermount3 -uz "$tmp/mnt" 2>/dev/null
    fi
    if [[ -n "$mount_pid" ]] && kill -0 "$mount_pid" 2>/dev/null; then
        kill -TERM "$mount_pid" 2>/dev/null
        wait "$mount_pid" 2>/dev/null
    fi
    [[ -n "$tmp" ]] && rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# workdir SIZE: a new directory that can hold a sparse file of SIZE, /dev/shm if SCALE_TMP cannot.
workdir() {
    local dir
    for parent in "${SCALE_TMP:-/tmp}" /dev/shm; do
        dir="$(mktemp -d "$parent/scale-16t.XXXXXX")"
        if truncate -s "${1^^}" "$dir/probe" 2>/dev/null; then
            rm -f "$dir/probe"
            echo "$dir"
            return
        fi
        echo "scale-16t: $parent cannot hold a sparse file of $1 ($(df -T "$parent" | awk 'NR == 2 { print $2 }'));" \
            "trying /dev/shm" >&2
        rm -rf "$dir"
    done
    die "no directory holds a sparse file of $1"
}

allocated_mib() { du -k "$1" | awk '{ printf "%.1f", $1 / 1024 }'; }

rows=()
# row SIZE STEP TIMEFILE IMAGE [NOTE]: one table row from /usr/bin/time -v's report.
row() {
    local wall rss allocated=""
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0;
        for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.2f", s }' "$3")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$3")
    [[ -f "$4" ]] && allocated=$(allocated_mib "$4")
    rows+=("| $1 | $2 | $wall | $rss | $allocated | ${5:-} |")
}

# step SIZE NAME IMAGE COMMAND...: runs bin/iomap COMMAND under /usr/bin/time -v. A failure is a
# row saying so (a base checkout may refuse or run out of memory) and a non-zero status.
step() {
    local size="$1" name="$2" image="$3"
    shift 3
    local out="$tmp/out.txt" timing="$tmp/time.txt"
    if ! /usr/bin/time -v -o "$timing" "$iomap" "$@" >"$out" 2>&1; then
        sed 's/^/    /' "$out"
        row "$size" "$name" "$timing" "$image" "failed: $(grep -m1 '^iomap: ' "$out" | cut -c1-240)"
        return 1
    fi
    sed 's/^/    /' "$out"
    row "$size" "$name" "$timing" "$image"
}

write_through_fuse() {
    local size="$1" image="$2" mnt="$tmp/mnt" log="$tmp/mount.log" timing="$tmp/time.txt"
    mkdir -p "$mnt"
    /usr/bin/time -v -o "$timing" "$iomap" mount -f "$image" "$mnt" >"$log" 2>&1 &
    mount_pid=$!
    for _ in $(seq 1 600); do
        mountpoint -q "$mnt" && break
        kill -0 "$mount_pid" 2>/dev/null || { cat "$log" >&2; die "mount exited"; }
        sleep 0.1
    done
    mountpoint -q "$mnt" || { cat "$log" >&2; die "not mounted after 60 s"; }
    mkdir "$mnt/small"
    for i in $(seq 1 100); do
        head -c 4096 /dev/urandom >"$mnt/small/f$i"
    done
    dd if=/dev/urandom of="$mnt/big" bs=1M count=64 conv=fsync status=none
    fusermount3 -u "$mnt"
    local status=0
    wait "$mount_pid" || status=$?
    mount_pid=""
    ((status == 0)) || { cat "$log" >&2; die "mount exited with $status"; }
    row "$size" "mount, write 100 x 4 KiB + 64 MiB, unmount" "$timing" "$image"
}

for size in $sizes; do
    tmp="$(workdir "$size")"
    image="$tmp/scale.img"
    echo "== $size in $tmp"
    if step "$size" "mkfs --size=$size" "$image" mkfs --size="$size" "$image" \
            && step "$size" "fsck" "$image" fsck "$image" \
            && step "$size" "stat" "$image" stat "$image" \
            && [[ "$write_step" == 1 && -c /dev/fuse ]] && command -v fusermount3 >/dev/null; then
        write_through_fuse "$size" "$image"
        step "$size" "fsck after the writes" "$image" fsck "$image" || true
    fi
    [[ -f "$image" ]] && echo "    image: $(stat -c %s "$image") bytes, $(allocated_mib "$image") MiB allocated"
    rm -rf "$tmp"
    tmp=""
done

echo
echo "## scale-16t: $(git -C "$checkout" rev-parse --short HEAD 2>/dev/null || echo '?') ($checkout)," \
    "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
    "IOMAP_JAVA_OPTS='${IOMAP_JAVA_OPTS:-}'"
echo
echo "| size | step | wall (s) | peak RSS (MiB) | image allocated after (MiB) | note |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
