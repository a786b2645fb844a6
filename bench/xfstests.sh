#!/usr/bin/env bash
# xfstests (kdave/xfstests at 63a29724) against iomap4j's FUSE mounts, and the kernel's ext4 and xfs as
# the baseline, on this machine (issue 38).
#
# Usage: bench/xfstests.sh CONFIG [TEST...]
#        bench/xfstests.sh table [CONFIG...]
#   CONFIG: xfs-like, gfs2-like, gfs2-like:data=journal, bcachefs-like, zonefs-like (FUSE mounts through
#           `mount -t fuse.iomap`), ext4 or xfs (the kernel's, on loop devices over sparse files), or
#           all (ext4, xfs, then the four FUSE configs; zonefs-like runs only with TESTs given), or several
#           of these joined by commas (ext4,xfs-like,bcachefs-like).
#   TEST:   what ./check takes (generic/003, -g generic/quick, ...); default -g generic/quick.
#   table:  prints the Markdown table of the results kept for each CONFIG (default: every one run),
#           one row per test, one column per CONFIG: pass, FAIL or "-" (not run), and the counts.
#
# For each CONFIG: two sparse images (TEST and SCRATCH, XFSTESTS_SIZE each) under the work directory,
# each behind a loop device; the kernel's configs mkfs the loop devices, the FUSE ones `iomap mkfs` the
# images and mount the loop devices with `mount -t fuse.iomap` (the helper takes a loop device: fuseblk
# over it, I/O to its backing file; see docs/xfstests.md). It writes its local.config (beside the images: configs can run at once), runs ./check as root
# in its own session, and keeps results/CONFIG/summary.tsv (test, status, seconds, reason) and check's
# own results. Images and loop devices are removed at the end, also on failure.
#
# xfstests is unpacked from XFSTESTS_TARBALL into XFSTESTS_BUILD (outside the repository), patched with
# bench/xfstests/*.patch (each says why) and built, once. The script installs what xfstests needs
# (Debian packages, the fsgqa users) and the mount helper (bin/iomap install-mount-helper).
#
# Environment:
#   XFSTESTS_BUILD    where xfstests is unpacked and built (default /work/build/xfstests-check)
#   XFSTESTS_TARBALL  the source (default /work/shared/tools/xfstests-63a2972.tar.gz)
#   XFSTESTS_WORK     images, mount points and results (default XFSTESTS_BUILD/work)
#   XFSTESTS_SIZE     size of each image (default 8g)
#   XFSTESTS_INSTALL  0: only check the packages, install nothing (default 1)
#   XFSTESTS_SERVER   1 (default): each FUSE config's mounts and mkfs run in one mount server (iomap serve, in
#                     the config's namespace; its log is server.log beside the results), not a JVM each;
#                     0: a JVM per mount, as a user's mount without IOMAP_SERVER
#   XFSTESTS_JOBS     how many configs run at once (default 1); each config always runs in a mount
#                     namespace of its own, so its mounts are seen by nobody else (no other process's df
#                     or statfs keeps them busy at umount) and the configs' mounts never meet
# Needs root, fuse3, losetup, and a built checkout (mvn -q install -DskipTests).
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
checkout="$(cd "$script_dir/.." && pwd)"
iomap="$checkout/bin/iomap"
build="${XFSTESTS_BUILD:-/work/build/xfstests-check}"
tarball="${XFSTESTS_TARBALL:-/work/shared/tools/xfstests-63a2972.tar.gz}"
work="${XFSTESTS_WORK:-$build/work}"
size="${XFSTESTS_SIZE:-8g}"
src="$build/xfstests"
fuse_configs=(xfs-like gfs2-like gfs2-like:data=journal bcachefs-like)
packages=(xfsprogs e2fsprogs attr acl fio bc psmisc quota libaio-dev liburing-dev uuid-dev xfslibs-dev
    libattr1-dev libacl1-dev libcap-dev libgdbm-dev libtool autoconf automake pkg-config gcc make
    fuse3 util-linux indent dbench)

die() {
    echo "xfstests.sh: $*" >&2
    exit 1
}

usage() {
    sed -n '4,14p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# Installs (or, with XFSTESTS_INSTALL=0, checks) the Debian packages xfstests uses.
ensure_packages() {
    local missing=()
    for package in "${packages[@]}"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    [[ ${#missing[@]} -eq 0 ]] && return
    if [[ "${XFSTESTS_INSTALL:-1}" == 0 ]]; then
        die "missing Debian packages: ${missing[*]} (apt-get install them, or drop XFSTESTS_INSTALL=0)"
    fi
    echo "xfstests.sh: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The users and group xfstests' permission tests run as (README: fsgqa, fsgqa2, 123456-fsgqa).
ensure_users() {
    getent group fsgqa >/dev/null || groupadd fsgqa
    id fsgqa >/dev/null 2>&1 || useradd -m -g fsgqa fsgqa
    id fsgqa2 >/dev/null 2>&1 || useradd -m fsgqa2
    id 123456-fsgqa >/dev/null 2>&1 || useradd -m 123456-fsgqa
}

# Unpacks, patches and builds xfstests once (a stamp file says it is done).
ensure_xfstests() {
    local stamp="$build/.built-by-iomap4j"
    [[ -f "$stamp" && -x "$src/ltp/fsx" ]] && { apply_patches; return; }
    mkdir -p "$build"
    if [[ ! -d "$src" ]]; then
        tar xzf "$tarball" -C "$build"
    fi
    apply_patches
    echo "xfstests.sh: building xfstests in $src (several minutes)" >&2
    (cd "$src" && nice make -j"$(nproc)" >"$build/build.log" 2>&1) || die "building xfstests failed: see $build/build.log"
    touch "$stamp"
}

# Brings the unpacked copy's patches up to date with bench/xfstests/*.patch (shell scripts only: no rebuild).
# A copy of each patch applied is kept in the unpacked tree (.iomap4j-applied/); when any patch changed, was
# added or went away, the applied ones are reverted, latest first, and today's applied in name order.
apply_patches() {
    local applied="$src/.iomap4j-applied" patch old changed=0
    mkdir -p "$applied"
    for patch in "$script_dir"/xfstests/*.patch; do
        [[ -e "$patch" ]] || continue
        cmp -s "$patch" "$applied/$(basename "$patch")" || changed=1
    done
    for old in "$applied"/*.patch; do
        [[ -e "$old" ]] || continue
        [[ -e "$script_dir/xfstests/$(basename "$old")" ]] || changed=1
    done
    [[ "$changed" == 1 ]] || return 0
    for old in $(ls -r "$applied"/*.patch 2>/dev/null); do
        patch -d "$src" -p1 -R -s -f --no-backup-if-mismatch -r - <"$old" \
            || die "cannot revert $old in $src: remove $src to unpack xfstests again"
        rm -f "$old"
    done
    for patch in "$script_dir"/xfstests/*.patch; do
        [[ -e "$patch" ]] || continue
        patch -d "$src" -p1 -s -f --no-backup-if-mismatch -r - <"$patch" || die "$patch does not apply to $src"
        cp "$patch" "$applied/"
    done
}

# losetup over a new sparse file; prints the loop device.
new_loop() {
    local file="$1"
    rm -f "$file"
    truncate -s "$size" "$file"
    losetup --find --show "$file"
}

# Starts the config's mount server (XFSTESTS_SERVER=1) and exports IOMAP_SERVER for bin/iomap, the mount
# helper and fuse-mkfs.sh; waits until it serves.
start_server() {
    local dir="$1"
    local server="$dir/server"
    mkdir -p "$dir"
    setsid "$iomap" serve "$server" >>"$dir/server.log" 2>&1 </dev/null &
    local i
    for ((i = 0; i < 600; i++)); do
        if [[ -f "$server/pid" ]] && kill -0 "$(cat "$server/pid")" 2>/dev/null; then
            export IOMAP_SERVER="$server"
            return
        fi
        sleep 0.1
    done
    die "the mount server did not start in 60 s: see $dir/server.log"
}

# Stops the config's mount server (SIGTERM unmounts what it serves); SIGKILL after 60 s.
stop_server() {
    local dir="$1"
    local pid
    unset IOMAP_SERVER
    pid="$(cat "$dir/server/pid" 2>/dev/null || true)"
    [[ -n "$pid" ]] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    local i
    for ((i = 0; i < 600; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    echo "xfstests.sh: the mount server (pid $pid) did not end in 60 s of SIGTERM; killed" >&2
    kill -KILL "$pid" 2>/dev/null || true
}

cleanup_config() {
    local dir="$1"
    local loop
    for mnt in "$dir/mnt/test" "$dir/mnt/scratch"; do
        if mountpoint -q "$mnt" 2>/dev/null; then
            umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
        fi
    done
    stop_server "$dir"
    for image in "$dir/test.img" "$dir/scratch.img"; do
        [[ -e "$image" ]] || continue
        for loop in $(losetup -j "$image" -O NAME -n 2>/dev/null); do
            losetup -d "$loop" 2>/dev/null || true
        done
        rm -f "$image"
    done
}

# The mount options of a config: the adapter's options (-O) as -o spellings, allow_other for the
# tests that run as fsgqa, and busy_timeout=10: after umount of a fuseblk mount the image is let go of at
# once (umount waits for FUSE_DESTROY), so a longer wait is only ever a test mounting the mounted device
# again (generic/409-411), which waits in vain (60 s by default, each time).
fuse_options() {
    local config="$1"
    local options="allow_other,busy_timeout=10"
    if [[ "$config" == *:* ]]; then
        options+=",${config#*:}"
    fi
    echo "$options"
}

# Formats TEST and SCRATCH for a config and writes local.config.
prepare() {
    local config="$1" dir="$2"
    local adapter="${config%%:*}"
    local test_loop scratch_loop
    mkdir -p "$dir/mnt/test" "$dir/mnt/scratch" "$dir/results"
    test_loop="$(new_loop "$dir/test.img")"
    scratch_loop="$(new_loop "$dir/scratch.img")"
    case "$adapter" in
        ext4)
            mkfs.ext4 -q -F "$test_loop"
            cat >"$dir/local.config" <<EOF
export FSTYP=ext4
EOF
            ;;
        xfs)
            mkfs.xfs -q -f "$test_loop"
            cat >"$dir/local.config" <<EOF
export FSTYP=xfs
EOF
            ;;
        *)
            "$iomap" mkfs --adapter "$adapter" --size "$size" "$dir/test.img" >/dev/null
            "$iomap" mkfs --adapter "$adapter" --size "$size" "$dir/scratch.img" >/dev/null
            cat >"$dir/local.config" <<EOF
export FSTYP=fuse
export FUSE_SUBTYP=.iomap
export MOUNT_OPTIONS="-o $(fuse_options "$config")"
export TEST_FS_MOUNT_OPTS="-o $(fuse_options "$config")"
export FUSE_MKFS_PROG="$script_dir/xfstests/fuse-mkfs.sh"
export IOMAP_XFSTESTS_MKFS="$iomap mkfs --adapter $adapter"
export IOMAP_XFSTESTS_SIZE=$size
EOF
            ;;
    esac
    # df -l -t TYPE: xfstests runs df over every mount to find its devices, and a FUSE mount that does not
    # answer (another user's, paused) would hang it; only local mounts of the config's type are asked.
    local types="-t fuseblk.iomap -t fuse.iomap"
    [[ "$adapter" == ext4 || "$adapter" == xfs ]] && types="-t $adapter"
    cat >>"$dir/local.config" <<EOF
export DF_PROG="$(type -P df) -T -P -l $types"
export TEST_DEV=$test_loop
export TEST_DIR=$dir/mnt/test
export SCRATCH_DEV=$scratch_loop
export SCRATCH_MNT=$dir/mnt/scratch
export RESULT_BASE=$dir/results
EOF
}

# Reads check's xunit report into summary.tsv: test, pass/fail/notrun, seconds, reason.
summarize() {
    local dir="$1"
    local report="$dir/results/result.xml"
    if [[ ! -f "$report" ]] || ! grep -q "<testcase" "$report"; then
        # check was stopped before it wrote its report: the per-test lines of check.log instead
        summarize_log "$dir"
        return
    fi
    python3 - "$report" >"$dir/summary.tsv" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for case in root.iter("testcase"):
    name = case.get("name")
    status, reason = "pass", ""
    for child in case:
        if child.tag == "skipped":
            status, reason = "notrun", child.get("message", "")
        elif child.tag in ("failure", "error"):
            status, reason = "fail", child.get("message", "")
    reason = " ".join(reason.split())[:200]
    print(f"{name}\t{status}\t{case.get('time', '')}\t{reason}")
EOF
}

# Reads check.log's per-test lines into summary.tsv (a run stopped before check wrote its report):
# "generic/001   10s" passed, "[not run] REASON" not run, "[failed, ...]" or "- output mismatch" failed; the
# test that was running when check was stopped has no verdict and is left out.
summarize_log() {
    local dir="$1"
    [[ -f "$dir/check.log" ]] || die "no report and no check.log in $dir (check failed to start)"
    python3 - "$dir/check.log" >"$dir/summary.tsv" <<'EOF'
import re, sys
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^([a-z0-9]+/[0-9]+)\s+(.*)$", line.rstrip("\n"))
    if not m:
        continue
    name, rest = m.group(1), " ".join(m.group(2).split())
    if rest.startswith("[not run]"):
        print(f"{name}\tnotrun\t\t{rest[len('[not run]'):].strip()[:200]}")
    elif rest.startswith("[failed") or rest.startswith("- "):
        print(f"{name}\tfail\t\t{rest[:200]}")
    elif re.fullmatch(r"([0-9]+s \.\.\. )?[0-9]+s", rest):
        print(f"{name}\tpass\t{rest.split()[-1][:-1]}\t")
EOF
}

run_config() {
    local config="$1"
    shift
    local dir="$work/${config//[:=]/-}"
    local tests=("$@")
    [[ ${#tests[@]} -gt 0 ]] || tests=(-g generic/quick)
    cleanup_config "$dir"
    rm -rf "$dir/results"
    trap 'cleanup_config "'"$dir"'"' EXIT
    if [[ "$config" != ext4 && "$config" != xfs && "${XFSTESTS_SERVER:-1}" == 1 ]]; then
        rm -f "$dir/server.log"
        start_server "$dir"
    fi
    prepare "$config" "$dir"
    local fstyp_flag=()
    [[ "$config" == ext4 || "$config" == xfs ]] || fstyp_flag=(-fuse)
    echo "xfstests.sh: $config: ./check ${fstyp_flag[*]} ${tests[*]} (log: $dir/check.log)" >&2
    local start end
    start=$(date +%s)
    # Its own session: the patched _pkill kills only processes of this session (not other users' fsstress).
    (cd "$src" && HOST_OPTIONS="$dir/local.config" setsid ./check "${fstyp_flag[@]}" -R xunit "${tests[@]}") >"$dir/check.log" 2>&1 || true
    end=$(date +%s)
    echo "$((end - start))" >"$dir/wall-seconds"
    summarize "$dir"
    cleanup_config "$dir"
    trap - EXIT
    awk -F'\t' -v c="$config" -v s="$((end - start))" '{ n[$2]++ } END {
        printf "%s: %d pass, %d fail, %d not run, %d s\n", c, n["pass"], n["fail"], n["notrun"], s }' "$dir/summary.tsv"
}

# The Markdown table of the kept results.
table() {
    local configs=("$@")
    if [[ ${#configs[@]} -eq 0 ]]; then
        configs=()
        for candidate in ext4 xfs "${fuse_configs[@]}" zonefs-like; do
            [[ -f "$work/${candidate//[:=]/-}/summary.tsv" ]] && configs+=("$candidate")
        done
    fi
    local files=()
    for config in "${configs[@]}"; do
        files+=("$config=$work/${config//[:=]/-}/summary.tsv")
    done
    python3 - "$script_dir/xfstests/reasons.tsv" "${files[@]}" <<'EOF'
import re, sys
reasons = []
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        pattern, reason = line.rstrip("\n").split("\t", 1)
        reasons.append((re.compile(pattern), reason))
columns, results, messages, tests = [], {}, {}, set()
for arg in sys.argv[2:]:
    config, path = arg.split("=", 1) if arg.count("=") == 1 else arg.rsplit("=", 1)
    columns.append(config)
    results[config], messages[config] = {}, {}
    for line in open(path):
        fields = line.rstrip("\n").split("\t")
        name, status = fields[:2]
        results[config][name] = status
        messages[config][name] = fields[3] if len(fields) > 3 else ""
        tests.add(name)
shown = {"pass": "pass", "fail": "FAIL", "notrun": "-"}
print("| test | " + " | ".join(columns) + " |")
print("|---|" + "---|" * len(columns))
for name in sorted(tests):
    print(f"| {name} | " + " | ".join(shown.get(results[c].get(name), "") for c in columns) + " |")
for status in ("pass", "fail", "notrun"):
    counts = [str(sum(1 for s in results[c].values() if s == status)) for c in columns]
    print(f"| **{status}** | " + " | ".join(counts) + " |")
# For every FUSE column: the tests that pass on ext4 and not here, each with its reason.
if "ext4" in results:
    for config in columns:
        if config in ("ext4", "xfs"):
            continue
        passed = [n for n in sorted(tests) if results["ext4"].get(n) == "pass"]
        missing = [n for n in passed if n in results[config] and results[config][n] != "pass"]
        absent = sum(1 for n in passed if n not in results[config])
        if not missing:
            continue
        print(f"\n**Pass on ext4, not on {config}** ({len(missing)} of the {len(passed) - absent} that ran on"
              f" both; {absent} more that pass on ext4 were not in this run):\n")
        print("| test | here | reason |")
        print("|---|---|---|")
        for name in missing:
            message = messages[config].get(name, "")
            reason = next((r for p, r in reasons if p.pattern == "test:" + name), None) \
                or next((r for p, r in reasons if not p.pattern.startswith("test:") and p.search(message)), None)
            if name not in results[config]:
                reason = "not in this run"
            elif reason is None:
                reason = "open: " + message
            shown_status = {"pass": "pass", "fail": "FAIL", "notrun": "-"}.get(results[config].get(name), "missing")
            print(f"| {name} | {shown_status} | {reason.replace('|', '/')} |")
EOF
}

main() {
    [[ $# -ge 1 ]] || usage
    if [[ "$1" == table ]]; then
        shift
        table "$@"
        return
    fi
    if [[ "$1" == _in-namespace ]]; then
        # main's own call, inside the config's mount namespace: one config, its TESTs
        shift
        run_config "$@"
        return
    fi
    [[ $(id -u) -eq 0 ]] || die "xfstests needs root (mount, losetup, the fsgqa users)"
    local config="$1"
    shift
    local configs=() named
    IFS=, read -r -a named <<<"$config"
    for one in "${named[@]}"; do
        case "$one" in
            all) configs+=(ext4 xfs "${fuse_configs[@]}") ;;
            ext4 | xfs | xfs-like | gfs2-like | gfs2-like:data=journal | bcachefs-like | zonefs-like) configs+=("$one") ;;
            *) usage ;;
        esac
    done
    ((${#configs[@]} > 0)) || usage
    ensure_packages
    ensure_users
    ensure_xfstests
    if [[ " ${configs[*]} " =~ -like ]]; then
        "$iomap" install-mount-helper >/dev/null
    fi
    local jobs="${XFSTESTS_JOBS:-1}"
    [[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "XFSTESTS_JOBS=$jobs: give a count of 1 or more"
    local started
    started=$(date +%s)
    local running=0 failed=0
    for one in "${configs[@]}"; do
        if ((running >= jobs)); then
            wait -n || failed=1
            running=$((running - 1))
        fi
        # A private mount namespace per config; the config's FUSE daemons live in it too, and it ends with them.
        unshare --mount --propagation private "$script_dir/xfstests.sh" _in-namespace "$one" "$@" &
        running=$((running + 1))
    done
    while ((running > 0)); do
        wait -n || failed=1
        running=$((running - 1))
    done
    echo "xfstests.sh: ${configs[*]}: $(($(date +%s) - started)) s with XFSTESTS_JOBS=$jobs" >&2
    return "$failed"
}

main "$@"
