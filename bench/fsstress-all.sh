#!/usr/bin/env bash
# xfstests' fsstress against a FUSE mount of every adapter, each mount with bin/iomap's default heap
# (issue 35, item 17: a gfs2-like data=journal mount died of OutOfMemoryError under this load). For
# each adapter: mkfs a sparse image, `bin/iomap mount` it, run `fsstress -n OPS -p PROCS` in it, then
# unmount and fsck. An adapter passes when fsstress exits 0 with no failed assertion and no
# "Transport endpoint is not connected", the mount process is still serving when fsstress ends, the
# unmount leaves the image clean (the mount process exits 0) and fsck finds nothing. Prints one table
# row per adapter (pass/fail, the first reason, wall time, the mount's peak RSS); exits 1 if any failed.
#
# zonefs-like is skipped: its files are the device's zones, made by mkfs; fsstress creates, renames and
# unlinks its own files and directories, none of which zonefs (or zonefs-like) allows.
#
# Usage: bench/fsstress-all.sh [CONFIG...]
#   CONFIG: xfs-like, gfs2-like, gfs2-like:data=journal, bcachefs-like (default: all four), or zonefs-like
#   (reported as skipped). Build the checkout first: mvn -q install -DskipTests.
# Environment:
#   FSSTRESS          an fsstress binary (default: XFSTESTS_BUILD/xfstests/ltp/fsstress, built there from
#                     XFSTESTS_TARBALL if missing; needs gcc, make, autoconf, libtool and xfstests'
#                     Debian build dependencies: xfslibs-dev uuid-dev libattr1-dev libacl1-dev
#                     libaio-dev liburing-dev)
#   XFSTESTS_BUILD    where xfstests is unpacked and built, outside the repository
#                     (default /work/build/xfstests)
#   XFSTESTS_TARBALL  the xfstests source (default /work/shared/tools/xfstests-63a2972.tar.gz)
#   FSSTRESS_OPS      operations per process (default 5000)
#   FSSTRESS_PROCS    processes (default 4)
#   FSSTRESS_SEED     fsstress's -s seed (default 1), the same for every adapter
#   FSSTRESS_SIZE     image size given to mkfs (default 1g)
#   FSSTRESS_TMP      parent of the work directory (default: bench/work); images are sparse and
#                     deleted at the end, also on failure
# bin/iomap's IOMAP_JAVA_OPTS is cleared, so every mount has the launcher's default heap.
# Needs fuse3 (fusermount3, /dev/fuse).
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
checkout="$(cd "$script_dir/.." && pwd)"
iomap="$checkout/bin/iomap"
ops="${FSSTRESS_OPS:-5000}"
procs="${FSSTRESS_PROCS:-4}"
seed="${FSSTRESS_SEED:-1}"
size="${FSSTRESS_SIZE:-1g}"
build="${XFSTESTS_BUILD:-/work/build/xfstests}"
tarball="${XFSTESTS_TARBALL:-/work/shared/tools/xfstests-63a2972.tar.gz}"
unset IOMAP_JAVA_OPTS

die() { echo "fsstress-all: $*" >&2; exit 2; }
[[ -f "$checkout/iomap-cli/target/iomap.jar" ]] || die "$checkout is not built: mvn -q install -DskipTests"
command -v fusermount3 >/dev/null || die "needs fuse3 (fusermount3)"

# fsstress: the given one, the one built before, or a new build from the tarball.
fsstress="${FSSTRESS:-$build/xfstests/ltp/fsstress}"
if [[ ! -x "$fsstress" ]]; then
    [[ -z "${FSSTRESS:-}" ]] || die "FSSTRESS=$FSSTRESS is not an executable"
    [[ -f "$tarball" ]] || die "no fsstress and no xfstests source at $tarball (set XFSTESTS_TARBALL or FSSTRESS)"
    case "$build/" in "$checkout"/*) die "XFSTESTS_BUILD=$build is inside the repository: build it outside" ;; esac
    echo "fsstress-all: building fsstress in $build (log: $build/build.log)" >&2
    mkdir -p "$build"
    tar xzf "$tarball" -C "$build"
    if ! (cd "$build/xfstests" && make configure && ./configure && make -C lib && make -C ltp fsstress) \
            >"$build/build.log" 2>&1; then
        die "building fsstress failed (see $build/build.log); xfstests needs: apt-get install gcc make autoconf \
automake libtool pkg-config uuid-dev xfslibs-dev libattr1-dev libacl1-dev libaio-dev liburing-dev"
    fi
fi

configs=("$@")
if [[ ${#configs[@]} -eq 0 ]]; then
    configs=(xfs-like gfs2-like gfs2-like:data=journal bcachefs-like zonefs-like)
fi

parent="${FSSTRESS_TMP:-$checkout/bench/work}"
mkdir -p "$parent"
tmp="$(mktemp -d "$parent/fsstress-all.XXXXXX")"
mnt="$tmp/mnt"
mkdir -p "$mnt"
mount_pid=""

stop_mount() {
    if mountpoint -q "$mnt" 2>/dev/null; then
        fusermount3 -u "$mnt" 2>/dev/null || { sleep 2; fusermount3 -u "$mnt" 2>/dev/null; } || true
    fi
    if [[ -n "$mount_pid" ]] && kill -0 "$mount_pid" 2>/dev/null; then
        for _ in $(seq 1 300); do kill -0 "$mount_pid" 2>/dev/null || break; sleep 0.2; done
        kill -TERM "$mount_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$mount_pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$mount_pid" 2>/dev/null || true
    fi
    if [[ -n "$mount_pid" ]]; then
        wait "$mount_pid" 2>/dev/null || true
    fi
    if grep -q " $mnt fuse" /proc/mounts 2>/dev/null; then
        fusermount3 -uz "$mnt" 2>/dev/null || true
    fi
    mount_pid=""
}

cleanup() {
    local rc=$?
    set +e
    stop_mount
    rm -rf "$tmp"
    [[ -n "${FSSTRESS_TMP:-}" ]] || rmdir "$parent" 2>/dev/null
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# peak_rss_mib PID: VmHWM of a live process in MiB (empty once it is gone).
peak_rss_mib() { awk '$1 == "VmHWM:" { printf "%d", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || true; }

# run_one CONFIG: sets result, reason, seconds and rss for one adapter.
run_one() {
    local config="$1" adapter="${1%%:*}" option="" image="$tmp/image.img" log="$tmp/mount.log"
    [[ "$config" == *:* ]] && option="${config#*:}"
    result=fail reason="" seconds="-" rss="-"
    if [[ "$adapter" == zonefs-like ]]; then
        result=skipped reason="one file per zone: no create, rename or unlink for fsstress"
        return
    fi
    rm -f "$image"
    if ! "$iomap" mkfs --adapter "$adapter" --size "$size" "$image" >"$tmp/mkfs.log" 2>&1; then
        reason="mkfs: $(tail -1 "$tmp/mkfs.log")"
        return
    fi
    local mount_args=(mount)
    [[ -n "$option" ]] && mount_args+=(-O "$option")
    "$iomap" "${mount_args[@]}" "$image" "$mnt" >"$log" 2>&1 &
    mount_pid=$!
    for _ in $(seq 1 300); do
        grep -q " $mnt fuse" /proc/mounts 2>/dev/null && break
        kill -0 "$mount_pid" 2>/dev/null || break
        sleep 0.2
    done
    if ! grep -q " $mnt fuse" /proc/mounts 2>/dev/null; then
        reason="mount: $(tail -1 "$log")"
        stop_mount
        return
    fi
    mkdir -p "$mnt/work"
    local start=$SECONDS status=0
    "$fsstress" -n "$ops" -p "$procs" -s "$seed" -d "$mnt/work" >"$tmp/fsstress.log" 2>&1 || status=$?
    seconds=$((SECONDS - start))
    rss="$(peak_rss_mib "$mount_pid")"
    rss="${rss:--}"
    local alive=yes
    if ! kill -0 "$mount_pid" 2>/dev/null || ! stat "$mnt/work" >/dev/null 2>&1; then
        alive=no
    fi
    if [[ $alive == yes ]]; then
        fusermount3 -u "$mnt" 2>/dev/null || true
        local mount_status=0
        wait "$mount_pid" || mount_status=$?
        mount_pid=""
        if [[ $mount_status -ne 0 ]]; then
            reason="unmount: exit $mount_status: $(grep -v '^\s*at ' "$log" | tail -1)"
        fi
    else
        stop_mount
        reason="the mount died: $(grep -m1 -E 'Exception|Error' "$log" || tail -1 "$log")"
    fi
    if [[ -z "$reason" && $status -ne 0 ]]; then
        reason="fsstress exit $status: $(tail -1 "$tmp/fsstress.log")"
    fi
    if [[ -z "$reason" ]] && grep -qE 'Assertion|Transport endpoint|Input/output error' "$tmp/fsstress.log"; then
        reason="fsstress: $(grep -m1 -E 'Assertion|Transport endpoint|Input/output error' "$tmp/fsstress.log")"
    fi
    if [[ -z "$reason" ]] && ! "$iomap" fsck "$image" >"$tmp/fsck.log" 2>&1; then
        reason="fsck: $(head -3 "$tmp/fsck.log" | tr '\n' ' ')"
    fi
    [[ -n "$reason" ]] || result=pass
    rm -f "$image"
}

echo "# fsstress -n $ops -p $procs -s $seed on FUSE mounts of $size images, bin/iomap's default heap;" \
    "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| adapter | result | time (s) | peak RSS (MiB) | reason |"
echo "|---|---|---|---|---|"
failed=0
for config in "${configs[@]}"; do
    run_one "$config"
    echo "| $config | $result | $seconds | $rss | ${reason:--} |"
    [[ $result != fail ]] || failed=1
done
exit "$failed"
