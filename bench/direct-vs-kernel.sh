#!/bin/bash
# Direct I/O against the kernel on the same disk (issue 17): for each round, real fio and
# `iomap bench` (xfs-like on a sparse image file opened with O_DIRECT) run the same job in DIR,
# alternating; one line per run with MiB/s, IOPS, p50/p99 completion latency and, for ours, the
# write amplification. Usage: bench/direct-vs-kernel.sh [DIR [ROUNDS]]  (default /tmp/iomap-direct, 2)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/tmp/iomap-direct}
rounds=${2:-2}
mkdir -p "$dir"
trap 'rm -f "$dir"/fio-run.* "$dir"/img "$dir"/h.json "$dir"/o.json' EXIT
cd "$dir"
line() { # $1 system, $2 job, $3 json file
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
system, job, path = sys.argv[1:]
text = open(path).read()
data = json.loads(text[text.index('{'):])
w = data['jobs'][0]['write']
p = w['clat_ns']['percentile']
wa = data['jobs'][0].get('iomap', {}).get('write_amplification')
print('%-36s %-6s %8.1f MiB/s %8d IOPS  p50 %7.0f us  p99 %7.0f us%s' % (job, system, w['bw'] / 1024,
      w['iops'], p['50.000000'] / 1000, p['99.000000'] / 1000, '' if wa is None else '  WA %.3f' % wa))
PY
}
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uptime)"
for round in $(seq 1 "$rounds"); do
    for job in seed-randwrite-4k-direct.fio seed-randwrite-4k-direct-uring.fio; do
        fio --output-format=json "$repo/bench/jobs/$job" 2>/dev/null > h.json
        line kernel "$job" h.json
        rm -f fio-run.*
        "$repo/bin/iomap" bench --progress=never --output-format=json --device "file:$dir/img" \
            "$repo/bench/jobs/$job" 2>/dev/null > o.json
        line ours "$job" o.json
        rm -f img
    done
done
echo "# done $(date -u +%FT%TZ); $(uptime)"
