#!/usr/bin/env bash
# Runs the seeds' three experiments with iomap bench, the JMH figure for E3, and the same jobs with
# the real fio on a file in this directory (the kernel page cache as reference). Output: one text
# file of raw results. Usage: bench/run-experiments.sh [OUTFILE]  (after mvn -q install -DskipTests)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
out=${1:-bench/results.txt}
work=bench/work
rm -rf "$work" && mkdir -p "$work"
{
  echo "# iomap4j experiments, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r)"
  echo
  echo "## E1: 4 KiB random overwrites + fdatasync, 64 KiB pages, perBlockDirty off vs on (RAM device)"
  bin/iomap bench --page-size 64k --compare perBlockDirty=false,true examples/seed-randwrite-4k.fio
  echo
  echo "## E1: the same on a file device"
  bin/iomap bench --page-size 64k --device "file:$work/e1.img" --compare perBlockDirty=false,true \
      examples/seed-randwrite-4k.fio
  echo
  echo "## E2: 128 KiB sequential writes, orderHints off vs on (RAM device)"
  bin/iomap bench --compare orderHints=false,true examples/seed-seqwrite-128k.fio
  echo
  echo "## E3: 1 KiB overwrites on a 1 KiB-block filesystem, stateLock SEPARATE vs COMBINED (RAM device)"
  bin/iomap bench --block-size 1k --compare stateLock=SEPARATE,COMBINED --repeat 3 examples/seed-overwrite-1k.fio
  echo
  echo "## E3: JMH"
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar \
      'FolioStateBenchmark.writeEnd|WriteEndBenchmark' -f 1 -wi 3 -i 5 -w 1 -r 1 2>&1 \
      | sed -n '/^Benchmark/,$p'
  echo
  echo "## Reference: the same jobs with the real fio on a file in $work (kernel page cache, 4 KiB pages)"
  for job in seed-randwrite-4k seed-seqwrite-128k seed-overwrite-1k; do
    echo "### fio $job"
    fio --directory="$work" examples/$job.fio 2>&1 | grep -E "^ *(write|WRITE):|^ *bw|IOPS=" || true
    rm -f "$work"/*.0 "$work"/*.[0-9]*
  done
} 2>&1 | tee "$out"
rm -rf "$work"
