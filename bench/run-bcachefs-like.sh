#!/usr/bin/env bash
# Issue 15's measurements of bcachefs-like (benchmarks/results/issue-15-bcachefs-like.md explains
# them): a. the order-hint seed's 128 KiB sequential job on bcachefs-like with orderHints off and on,
# on a RAM device (no data I/O cost, the seed's no_data_io) and on a file device in bench/work;
# b. metadata bytes per fdatasync of allocating 4 KiB random writes, bcachefs-like (journal of keys)
# vs xfs-like (journal of block images), same run; c. the same job with the real fio on a file in
# bench/work (the host kernel, same disk, same run) for the ratio against the kernel.
# Usage: bench/run-bcachefs-like.sh [OUTFILE]  (after building iomap-cli/target/iomap.jar)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-benchmarks/results/issue-15-bcachefs-like.txt}
work=bench/work
alloc=bench/jobs/randwrite-4k-alloc-fdatasync.fio
rm -rf "$work" && mkdir -p "$work" "$(dirname "$out")"
trap 'rm -rf "$work"' EXIT
# The seed's job without fio's layout: fio would fallocate the file first, and bcachefs-like's
# fallocate allocates and zeroes real blocks (there are no reservation keys), so the copy-on-write
# overwrite would need the space twice and the run would measure the zeroing too.
seq=$work/seed-seqwrite-128k-nofallocate.fio
sed 's/^\tend_fsync=1$/\tend_fsync=1\n\tfallocate=none/' examples/seed-seqwrite-128k.fio > "$seq"
grep -q '^	fallocate=none$' "$seq"
{
  echo "# bcachefs-like measurements, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "## a. the seed's 128 KiB sequential writes, orderHints=false vs true, RAM device (no data I/O cost)"
  bin/iomap bench --progress=never --repeat 3 --adapter bcachefs-like --compare orderHints=false,true "$seq"
  echo
  echo "## a'. the same on a file device in $work ($(df -T "$work" | awk 'NR == 2 { print $2 }'))"
  bin/iomap bench --progress=never --repeat 3 --adapter bcachefs-like --device "file:$work/seq.img" \
      --compare orderHints=false,true "$seq"
  echo
  echo "## a''. xfs-like, same job and devices, for reference"
  bin/iomap bench --progress=never --repeat 3 --adapter xfs-like --compare orderHints=false,true "$seq"
  echo
  echo "## b. allocating 4 KiB random writes + fdatasync: bcachefs-like vs xfs-like (RAM device)"
  bin/iomap bench --progress=never --repeat 3 --compare adapter=bcachefs-like,xfs-like "$alloc"
  echo
  echo "## b'. the same on a file device in $work"
  bin/iomap bench --progress=never --repeat 3 --device "file:$work/alloc.img" \
      --compare adapter=bcachefs-like,xfs-like "$alloc"
  echo
  echo "## c. the same two jobs with the real fio on files in $work (host kernel page cache), 3 runs each"
  mkdir -p "$work/fio"
  for job in "$seq" "$alloc"; do
    for run in 1 2 3; do
      fio --directory="$work/fio" "$job" 2>&1 | grep -E "^ *(write|WRITE):|IOPS=|sync \(usec\)" || true
      rm -f "$work"/fio/*
    done
  done
} 2>&1 | tee "$out"
