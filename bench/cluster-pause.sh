#!/usr/bin/env bash
# Issue 35 item 9: a cluster node paused past its ZooKeeper session (SIGSTOP) and then resumed (SIGCONT)
# must not overwrite what another node fsync'd meanwhile. Each run, through the command line:
# `iomap zookeeper`, a gfs2-like image, two nodes mounted with FUSE (`iomap mount --cluster`), a loop
# overwriting a 1 MiB file with 'a' bytes through node A and fsyncing it (dd conv=fsync); A's mount process
# is stopped; through node B the file is overwritten with 'b' bytes and fsync'd (this waits until A's
# session expired and B recovered A's journal); A is resumed and runs on for a few seconds; both nodes are
# unmounted, a third node C mounts the image and compares the file with B's bytes. One line per run, then
# "INTACT of N runs kept B's fsync'd data intact".
#
# Usage: bench/cluster-pause.sh [RUNS]    (default 20; about 40 s a run)
# IOMAP=/path/to/bin/iomap runs another build's command (default: this tree's bin/iomap, after
# `mvn -q install -DskipTests`). Needs fuse3 (fusermount3, /dev/fuse). Everything it starts is stopped
# and its temporary directory deleted at the end, also on Ctrl-C.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
iomap=${IOMAP:-$root/bin/iomap}
runs=${1:-20}
work=$(mktemp -d /tmp/iomap-cluster-pause.XXXXXX)
pids=()

cleanup() {
  for mnt in "$work"/a "$work"/b "$work"/c; do
    if grep -qs " $mnt " /proc/mounts; then fusermount3 -u -z "$mnt" || true; fi
  done
  for pid in "${pids[@]}"; do
    kill -CONT "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to 60 s until $1 is a mount point, or fails if process $2 ended first.
await_mount() {
  for _ in $(seq 600); do
    if grep -qs " $1 " /proc/mounts; then return 0; fi
    if ! kill -0 "$2" 2>/dev/null; then echo "mount of $1 failed: $(cat "$1.err")" >&2; return 1; fi
    sleep 0.1
  done
  echo "mount of $1 timed out" >&2
  return 1
}

# Mounts node $1 (a, b or c) on $work/$1 in the background; its pid is in $node_pid.
mount_node() {
  mkdir -p "$work/$1"
  "$iomap" mount -f --adapter gfs2-like --cluster "zk=127.0.0.1:$port" --node-id "$1" "$work/img" "$work/$1" \
    2> "$work/$1.err" &
  node_pid=$!
  pids+=("$node_pid")
  await_mount "$work/$1" "$node_pid"
}

# Unmounts $work/$1 and waits (up to 60 s) for its process $2; kills it if it does not end.
unmount_node() {
  fusermount3 -u "$work/$1" 2>/dev/null || fusermount3 -u -z "$work/$1" 2>/dev/null || true
  for _ in $(seq 600); do
    if ! kill -0 "$2" 2>/dev/null; then wait "$2" 2>/dev/null || true; return 0; fi
    sleep 0.1
  done
  kill -KILL "$2" 2>/dev/null || true
  wait "$2" 2>/dev/null || true
}

head -c 1048576 /dev/zero | tr '\0' 'a' > "$work/from-a"
head -c 1048576 /dev/zero | tr '\0' 'b' > "$work/from-b"
intact=0
for run in $(seq "$runs"); do
  port=$(free_port)
  rm -rf "$work/zk" "$work/img" "$work"/*.err "$work/writes"
  "$iomap" zookeeper --port "$port" --data "$work/zk" > "$work/zk.out" 2> "$work/zk.err" &
  zk_pid=$!
  pids+=("$zk_pid")
  for _ in $(seq 300); do grep -qs "serving" "$work/zk.out" && break; sleep 0.1; done
  "$iomap" mkfs --adapter=gfs2-like -o journals=3 --size=32m "$work/img" > /dev/null
  mount_node a
  a_pid=$node_pid
  mount_node b
  b_pid=$node_pid

  dd if="$work/from-a" of="$work/a/f" bs=64k conv=fsync status=none
  ( while :; do
      if dd if="$work/from-a" of="$work/a/f" bs=64k conv=notrunc,fsync status=none 2>/dev/null; then
        echo "$(date +%s.%N) ok"
      else
        echo "$(date +%s.%N) refused"
        sleep 0.05
      fi
    done ) > "$work/writes" &
  writer_pid=$!
  pids+=("$writer_pid")
  sleep 1
  kill -STOP "$a_pid"
  stopped=$(date +%s.%N)
  b_status=ok
  dd if="$work/from-b" of="$work/b/f" bs=64k conv=notrunc,fsync status=none 2> "$work/b-dd.err" || b_status=failed
  resumed=$(date +%s.%N)
  kill -CONT "$a_pid"
  sleep 3
  kill "$writer_pid" 2>/dev/null || true
  wait "$writer_pid" 2>/dev/null || true
  late=$(awk -v t="$resumed" '$1 > t && $2 == "ok"' "$work/writes" | wc -l)
  refused=$(awk -v t="$resumed" '$1 > t && $2 == "refused"' "$work/writes" | wc -l)
  unmount_node a "$a_pid"
  unmount_node b "$b_pid"

  mount_node c
  c_pid=$node_pid
  if [[ $b_status == ok ]] && cmp -s "$work/from-b" "$work/c/f"; then
    verdict=intact
    intact=$((intact + 1))
  else
    others=$( (tr -d 'b' < "$work/c/f" || true) | wc -c)
    verdict="LOST (B's dd: $b_status; the file now holds $others bytes that are not B's)"
  fi
  unmount_node c "$c_pid"
  kill "$zk_pid" 2>/dev/null || true
  wait "$zk_pid" 2>/dev/null || true
  pids=()   # every process of the run ended and was waited for
  paused=$(awk -v a="$stopped" -v b="$resumed" 'BEGIN { printf "%.1f", b - a }')
  echo "run $run: $verdict; A paused $paused s; after its resume A's dd+fsync succeeded $late times," \
    "was refused $refused times"
done
echo "$intact of $runs runs kept B's fsync'd data intact"
