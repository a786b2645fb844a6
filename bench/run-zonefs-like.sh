#!/usr/bin/env bash
# Issue 20's measurements of zonefs-like: buffered appends to a sequential zone file (fio's rw=write
# with filename=/seq/0) in 4 KiB and 128 KiB writes, the same 4 KiB appends with an fdatasync every
# 128 KiB, and 4 KiB random writes to a conventional zone file (/cnv/0); each job writes its 16 MiB
# zone three times (twice for the conventional one), and a pass that comes back to offset 0 of a
# sequential file resets the zone first (the adapter counter zone.resets). a. on a RAM device
# (no data I/O cost) with --zones; b. on a zoned image file in bench/work made by iomap mkfs, which
# bench reformats on the image's own zones (no --zones).
# Usage: bench/run-zonefs-like.sh [OUTFILE]  (after building iomap-cli/target/iomap.jar)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-benchmarks/results/issue-20-zonefs-like.txt}
work=bench/work
zones=zone-size=16m,conventional=2
jobs=(bench/jobs/zonefs-append-4k.fio bench/jobs/zonefs-append-128k.fio
      bench/jobs/zonefs-append-4k-fdatasync.fio bench/jobs/zonefs-conventional-4k.fio)
rm -rf "$work" && mkdir -p "$work" "$(dirname "$out")"
trap 'rm -rf "$work"' EXIT
# The lines of iomap's text report that matter here, and fio's bandwidth line.
summary() { grep -E "^ +(WRITE|app|device|write amplification|adapter) *[:=]| WRITE: " || true; }
{
  echo "# zonefs-like measurements, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
  bin/iomap adapters | grep -A1 '^zonefs-like'
  for job in "${jobs[@]}"; do
    echo
    echo "## a. $job, RAM device, --zones $zones"
    bin/iomap bench --progress=never --adapter zonefs-like --zones "$zones" "$job" 2>&1 | summary
  done
  bin/iomap mkfs --adapter zonefs-like --size 96m -o "$zones" "$work/zoned.img"
  for job in "${jobs[@]}"; do
    echo
    echo "## b. $job, zoned image $work/zoned.img ($(df -T "$work" | awk 'NR == 2 { print $2 }')), its own zones"
    bin/iomap bench --progress=never --force --device "file:$work/zoned.img" "$job" 2>&1 | summary
    bin/iomap fsck "$work/zoned.img"
  done
} 2>&1 | tee "$out"
