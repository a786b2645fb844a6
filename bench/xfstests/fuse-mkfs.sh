#!/usr/bin/env bash
# xfstests' formatter of the scratch filesystem for FSTYP=fuse (FUSE_MKFS_PROG in the local.config that
# bench/xfstests.sh writes; called by the _scratch_mkfs, _scratch_mkfs_sized and _scratch_mkfs_blocksized
# of bench/xfstests/scratch-mkfs.patch and the _mkfs_dev of mkfs-dev.patch).
#
#   fuse-mkfs.sh DEVICE [SIZE [BLOCKSIZE]]
#
# DEVICE is a loop device over an image (SCRATCH_DEV, or one a test made: _mkfs_dev), or the image itself.
# The image is formatted with `iomap mkfs --force` at SIZE bytes (default: for SCRATCH_DEV its size at setup,
# IOMAP_XFSTESTS_SIZE; for another device its size) and BLOCKSIZE (default: the adapter's), and the loop
# device is told the image's new size.
# Environment (from local.config): IOMAP_XFSTESTS_MKFS, the `iomap mkfs --adapter NAME ...` command line;
# IOMAP_XFSTESTS_SIZE, the default size.
set -euo pipefail

device="${1:?usage: fuse-mkfs.sh DEVICE [SIZE [BLOCKSIZE]]}"
size="${2:-}"
block_size="${3:-}"
if [[ -z "$size" && "$device" == "${SCRATCH_DEV:-}" ]]; then
    size="${IOMAP_XFSTESTS_SIZE:?IOMAP_XFSTESTS_SIZE is not set (local.config)}"
fi
[[ -n "${IOMAP_XFSTESTS_MKFS:-}" ]] || { echo "fuse-mkfs.sh: IOMAP_XFSTESTS_MKFS is not set (local.config)" >&2; exit 1; }

image="$device"
if [[ -b "$device" ]]; then
    image="$(losetup -n -O BACK-FILE "$device" 2>/dev/null | head -n 1 | sed 's/[[:space:]]*$//')"
    [[ -n "$image" && -f "$image" ]] || { echo "fuse-mkfs.sh: $device is not a loop device over an image" >&2; exit 1; }
fi

args=(--force)
[[ -n "$size" ]] && args+=(--size "$size")
[[ -n "$block_size" ]] && args+=(--block-size "$block_size")
# shellcheck disable=SC2086 # IOMAP_XFSTESTS_MKFS is a command line
$IOMAP_XFSTESTS_MKFS "${args[@]}" "$image" >/dev/null
if [[ -b "$device" ]]; then
    losetup -c "$device"
fi
