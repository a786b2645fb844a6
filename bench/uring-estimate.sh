#!/usr/bin/env bash
# Issue 37, item 3: an upper bound of what FUSE over io_uring would save per request on this machine.
#
# Usage: bench/uring-estimate.sh P50_US
#   P50_US  the mount's round trip of one 4 KiB request, p50 in us (bench/fuse-request-cost.sh)
# Compiles bench/uring-estimate.c (gcc) and measures one null system call and a pipe ping-pong between
# two threads on the same CPU and on two CPUs. io_uring saves at most one system call of the server's
# two per request (read of the next request + writev of the reply become one io_uring_enter) and, with a
# queue per CPU, the difference between two cross-CPU wake-ups and two same-CPU ones. The estimate is
# P50 / (P50 - saving): the speed-up of 4 KiB requests if every saving were realised.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
p50_us=${1:?usage: bench/uring-estimate.sh P50_US}
binary=$(mktemp)
trap 'rm -f "$binary"' EXIT
gcc -O2 -Wall -Werror -pthread -o "$binary" "$root/bench/uring-estimate.c"
read -r syscall_ns same_ns cross_ns < <("$binary")
python3 - "$p50_us" "$syscall_ns" "$same_ns" "$cross_ns" <<'PY'
import sys
p50, syscall, same, cross = float(sys.argv[1]), *(int(v) / 1000 for v in sys.argv[2:])
# A request that already completes faster than a cross-CPU round trip cannot be paying for two
# cross-CPU wake-ups: its server ran where the caller did (or was already awake), and a queue per CPU
# has no wake-up left to save. Only the system call remains.
wakeups = max(0.0, cross - same) if p50 >= cross else 0.0
saving = syscall + wakeups
print(f"null syscall {syscall:.2f} us; pipe round trip p50: same CPU {same:.2f} us, two CPUs {cross:.2f} us")
if p50 < cross:
    print(f"the request's {p50:.1f} us is below a cross-CPU round trip: no cross-CPU wake-up to save")
print(f"saving per request at most {saving:.2f} us of {p50:.1f} us: estimated speed-up {p50 / (p50 - saving):.2f}x"
      " (build only at 1.30x or more)")
PY
