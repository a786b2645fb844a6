#!/usr/bin/env bash
# Issue 14's measurements of gfs2-like (benchmarks/results/issue-14-gfs2-like.md explains them):
# the seed's E1 job on gfs2-like, an allocating fdatasync job over gfs2-like (ordered and
# data=journal) and xfs-like in one table, on a RAM device and on a file device in bench/work, and
# the same allocating job with the real fio on a file in bench/work (the host kernel, same disk, same
# run). Usage: bench/run-gfs2-like.sh [OUTFILE]  (after building iomap-cli/target/iomap.jar)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-benchmarks/results/issue-14-gfs2-like.txt}
work=bench/work
job=bench/jobs/append-4k-fdatasync.fio
rm -rf "$work" && mkdir -p "$work" "$(dirname "$out")"
{
  echo "# gfs2-like measurements, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "## a. E1 on gfs2-like: 4 KiB random overwrites + fdatasync, 64 KiB pages, perBlockDirty off vs on (RAM device)"
  bin/iomap bench --progress=never --adapter gfs2-like --page-size 64k --compare perBlockDirty=false,true \
      examples/seed-randwrite-4k.fio
  echo
  echo "## a'. the same with orderHints=false (every folio one 64 KiB page)"
  bin/iomap bench --progress=never --adapter gfs2-like --page-size 64k --set orderHints=false \
      --compare perBlockDirty=false,true examples/seed-randwrite-4k.fio
  echo
  echo "## b. allocating fdatasync job: gfs2-like, gfs2-like data=journal, xfs-like (RAM device)"
  bin/iomap bench --progress=never --repeat 3 --compare adapter=gfs2-like,gfs2-like:data=journal,xfs-like "$job"
  echo
  echo "## b'. the same on a file device in $work ($(df -T "$work" | awk 'NR == 2 { print $2 }'))"
  bin/iomap bench --progress=never --repeat 3 --device "file:$work/append.img" \
      --compare adapter=gfs2-like,gfs2-like:data=journal,xfs-like "$job"
  echo
  echo "## c. the same job with the real fio on a file in $work (host kernel page cache), 3 runs"
  for run in 1 2 3; do
    fio --directory="$work" "$job" 2>&1 | grep -E "^ *(write|WRITE):|IOPS=|sync \(usec\)" || true
    rm -f "$work"/append-4k.*
  done
} 2>&1 | tee "$out"
rm -rf "$work"
