#!/usr/bin/env bash
# Issue 40, items 3-6: gfs2-like across hosts, on one machine. Network namespaces stand for hosts:
#
#   iomtb-st          nbd-server, the shared disk         storage network 10.213.1.1
#   iomtb-zk1..zk3    one ZooKeeper server each            cluster network 10.213.0.11-13
#   iomtb-n1..n3      one iomap node each (FUSE mount)     cluster 10.213.0.21-23, storage 10.213.1.21-23
#
# Two networks, each a bridge this script creates (iomtb-lk: cluster, iomtb-sb: storage) with a veth pair
# per host; the addresses exist only inside the namespaces (the root namespace has none on the bridges,
# and no namespace has a route elsewhere), so nothing leaves them. A partition is a pulled cable: the
# host's port is taken off its bridge (`ip link set PORT nomaster`), so its packets vanish silently while
# its interface stays up; a node cut from ZooKeeper only loses its cluster port, from storage only its
# storage port.
#
# Processes run in a host's network namespace with `nsenter --net` (not `ip netns exec`, which also makes
# a mount namespace), so the nodes' FUSE mounts live in the root mount namespace, on $WORK/mnt/n1..n3,
# where the test driver (a JVM in the root namespaces) reads and writes them; the driver itself never
# uses the networks. Fencing (bench/testbed/fence-agent.sh, named by every node's --cluster spec):
# nbd-server's access list plus killing the fenced host's server processes; see docs/design-notes.md.
#
# Usage (root; needs iproute2, nbd-server, fuse3, a C compiler for the delay line; build first:
# mvn -q install -DskipTests, then mvn -q -pl bench/testbed package -DskipTests):
#   bench/cluster-hosts.sh up [--delay-us N]   hosts, networks, nbd-server, ZooKeeper, mkfs, three mounts
#   bench/cluster-hosts.sh test [SCENARIO...]  the fault scenarios (default: all), one verdict line each
#   bench/cluster-hosts.sh bench [US...]       the numbers of item 6 at each delay (default 200 us; bench/results.txt)
#   bench/cluster-hosts.sh all [--delay-us N]  up, test, down; down also on failure or interruption (trap)
#   bench/cluster-hosts.sh down                removes every namespace, bridge, mount, process, file; idempotent
#   bench/cluster-hosts.sh delay US            each host delays what it sends by US microseconds (0: off)
#   bench/cluster-hosts.sh fault ACTION ARGS   one step, as the scenarios use them (see `fault` below)
# $IOMAP_TESTBED_DIR (default /tmp/iomap-testbed) holds the state; `down` deletes it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
iomap=${IOMAP:-$root/bin/iomap}
export IOMAP_TESTBED_DIR=${IOMAP_TESTBED_DIR:-/tmp/iomap-testbed}
work=$IOMAP_TESTBED_DIR
java_home=${IOMAP_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
testbed_jar=$root/bench/testbed/target/iomap-testbed.jar
agent=$root/bench/testbed/fence-agent.sh
prefix=iomtb
nodes=(n1 n2 n3)
zks=(zk1 zk2 zk3)
nbd_port=10809
export_name=iomap
fs_size=2048m          # the filesystem; the export is 1 MiB longer: the fencing probe's area
probe_offset=$((2048 * 1048576))
zk_servers="1=10.213.0.11:2181:2888:3888,2=10.213.0.12:2181:2888:3888,3=10.213.0.13:2181:2888:3888"
zk_connect="10.213.0.11:2181,10.213.0.12:2181,10.213.0.13:2181"

die() { echo "cluster-hosts: $*" >&2; exit 1; }
log() { echo "cluster-hosts: $*" >&2; }
ns() { echo "$prefix-$1"; }
in_ns() { local host=$1; shift; nsenter -F --net="/run/netns/$(ns "$host")" -- "$@"; }
# Runs a command in host $1's network namespace in the background, as the process whose id is $! (no shell
# or nsenter in between: kill and kill -STOP reach it); redirect the call itself.
spawn_in_ns() { local host=$1; shift; ( exec nsenter -F --net="/run/netns/$(ns "$host")" -- "$@" ) & }
lk_addr() { case $1 in zk*) echo "10.213.0.1${1#zk}" ;; n*) echo "10.213.0.2${1#n}" ;; esac; }
sb_addr() { case $1 in st) echo 10.213.1.1 ;; n*) echo "10.213.1.2${1#n}" ;; esac; }
pidfile() { echo "$work/pids/$1.pid"; }
pid_of() { cat "$(pidfile "$1")" 2>/dev/null || true; }
alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }

# --- networks -------------------------------------------------------------------------------------

# Adds host $1 to bridge $2 ("lk" or "sb") as interface $3 inside, with address $4/24.
plug() {
  local host=$1 net=$2 dev=$3 addr=$4 port="$prefix-$2-$1"
  ip link add "$port" type veth peer name "$dev" netns "$(ns "$host")"
  ip link set "$port" master "$prefix-$net" up
  ip -n "$(ns "$host")" addr add "$addr/24" dev "$dev"
  ip -n "$(ns "$host")" link set "$dev" up
}

make_networks() {
  for net in lk sb; do
    ip link add "$prefix-$net" type bridge
    ip link set "$prefix-$net" up
  done
  for host in st "${zks[@]}" "${nodes[@]}"; do
    ip netns add "$(ns "$host")"
    ip -n "$(ns "$host")" link set lo up
  done
  plug st sb sb0 "$(sb_addr st)"
  for zk in "${zks[@]}"; do plug "$zk" lk lk0 "$(lk_addr "$zk")"; done
  for node in "${nodes[@]}"; do
    plug "$node" lk lk0 "$(lk_addr "$node")"
    plug "$node" sb sb0 "$(sb_addr "$node")"
  done
  printf '%s %s\n' n1 "$(sb_addr n1)" n2 "$(sb_addr n2)" n3 "$(sb_addr n3)" > "$work/storage-hosts"
}

# Interfaces of host $1 inside its namespace.
devices_of() { case $1 in st) echo sb0 ;; zk*) echo lk0 ;; n*) echo "lk0 sb0" ;; esac; }

# Every host delays what it sends by $1 microseconds (0 removes the delay line).
set_delay() {
  local us=$1
  for host in st "${zks[@]}" "${nodes[@]}"; do
    local pid; pid=$(pid_of "delay-$host")
    if alive "$pid"; then kill "$pid"; fi
    rm -f "$(pidfile "delay-$host")"
    for dev in $(devices_of "$host"); do
      tc -n "$(ns "$host")" qdisc del dev "$dev" clsact 2>/dev/null || true
      ip -n "$(ns "$host")" link del "d$dev" 2>/dev/null || true
    done
  done
  echo "$us" > "$work/delay-us"
  ((us > 0)) || return 0
  if [[ ! -x $work/delayline || $root/bench/testbed/delayline.c -nt $work/delayline ]]; then
    cc -O2 -Wall -o "$work/delayline" "$root/bench/testbed/delayline.c" || die "cannot compile the delay line"
  fi
  for host in st "${zks[@]}" "${nodes[@]}"; do
    local pairs=()
    for dev in $(devices_of "$host"); do
      in_ns "$host" ip tuntap add dev "d$dev" mode tap
      ip -n "$(ns "$host")" link set "d$dev" up
      tc -n "$(ns "$host")" qdisc add dev "$dev" clsact
      tc -n "$(ns "$host")" filter add dev "$dev" egress protocol all u32 match u32 0 0 \
        action mirred egress redirect dev "d$dev"
      pairs+=("$dev:d$dev")
    done
    spawn_in_ns "$host" "$work/delayline" "$us" "${pairs[@]}" > "$work/logs/delay-$host.log" 2>&1 < /dev/null
    echo $! > "$(pidfile "delay-$host")"
  done
  for host in st "${zks[@]}" "${nodes[@]}"; do
    for _ in $(seq 100); do grep -qs ready "$work/logs/delay-$host.log" && break; sleep 0.05; done
    grep -qs ready "$work/logs/delay-$host.log" || die "the delay line of $host did not start: $(cat "$work/logs/delay-$host.log")"
  done
}

# --- services -------------------------------------------------------------------------------------

start_nbd() {
  local pid; pid=$(pid_of nbd)
  if alive "$pid"; then return 0; fi
  cat > "$work/nbd.conf" <<EOF
[generic]
    listenaddr = $(sb_addr st)
    port = $nbd_port
[$export_name]
    exportname = $work/disk.img
    authfile = $work/nbd.allow
    flush = true
    fua = true
    trim = true
EOF
  rm -f "$work/nbd.pid"
  in_ns st nbd-server -C "$work/nbd.conf" -p "$work/nbd.pid" > "$work/logs/nbd.log" 2>&1 || die "nbd-server did not start: $(cat "$work/logs/nbd.log")"
  for _ in $(seq 100); do [[ -s $work/nbd.pid ]] && break; sleep 0.05; done
  cp "$work/nbd.pid" "$(pidfile nbd)"
}

# Kills nbd-server and every process serving a connection (a crash of the storage host's server).
kill_nbd() {
  local pids; pids=$(ip netns pids "$(ns st)" | grep -vx "$(pid_of delay-st)" || true)
  # shellcheck disable=SC2086 # a list of pids
  [[ -z $pids ]] || kill -KILL $pids 2>/dev/null || true
  for _ in $(seq 200); do
    [[ -z $(ip netns pids "$(ns st)" | grep -vx "$(pid_of delay-st)" || true) ]] && break
    sleep 0.02
  done
  rm -f "$(pidfile nbd)"
}

start_zk() {
  local zk=$1 id=${1#zk} pid; pid=$(pid_of "$zk")
  if alive "$pid"; then return 0; fi
  spawn_in_ns "$zk" "$iomap" zookeeper --server-id "$id" --servers "$zk_servers" --data "$work/$zk" \
    >> "$work/logs/$zk.out" 2>> "$work/logs/$zk.err" < /dev/null
  echo $! > "$(pidfile "$zk")"
}

await_zk() {
  for zk in "$@"; do
    for _ in $(seq 600); do
      zk_mode "$zk" > /dev/null 2>&1 && break
      sleep 0.1
    done
    zk_mode "$zk" > /dev/null 2>&1 || die "ZooKeeper $zk does not serve: $(tail -3 "$work/logs/$zk.err")"
  done
}

# Prints leader, follower, or fails: ZooKeeper's "srvr" command, asked from the server's own host.
zk_mode() {
  in_ns "$1" bash -c "exec 3<>/dev/tcp/$(lk_addr "$1")/2181 && echo srvr >&3 && timeout 2 cat <&3" 2>/dev/null \
    | awk '/^Mode:/ { print $2; found = 1 } END { exit !found }'
}

kill_zk() {
  local pid; pid=$(pid_of "$1")
  if alive "$pid"; then kill -KILL "$pid"; fi
  for _ in $(seq 200); do alive "$pid" || break; sleep 0.02; done
  rm -f "$(pidfile "$1")"
}

cluster_spec() { echo "zk=$zk_connect?fence=$agent"; }
image() { echo "nbd://$(sb_addr st):$nbd_port/$export_name"; }

# Mounts node $1 (in the background) and waits up to 90 s for the mount; fails with the mount's own error.
mount_node() {
  local node=$1 mnt=$work/mnt/$1
  mkdir -p "$mnt"
  if grep -qs " $mnt " /proc/mounts; then return 0; fi
  local lines; lines=$(cat "$work/logs/$node.err" 2>/dev/null | wc -l)
  spawn_in_ns "$node" "$iomap" mount --adapter gfs2-like --cluster "$(cluster_spec)" --node-id "$node" \
    "$(image)" "$mnt" >> "$work/logs/$node.out" 2>> "$work/logs/$node.err" < /dev/null
  local pid=$!
  echo "$pid" > "$(pidfile "$node")"
  for _ in $(seq 900); do
    if grep -qs " $mnt " /proc/mounts; then return 0; fi
    if ! alive "$pid"; then
      sleep 0.2
      echo "mount of $node failed: $(tail -n +$((lines + 1)) "$work/logs/$node.err" | grep -v '^WARNING' | tail -3)" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "mount of $node timed out" >&2
  return 1
}

# Unmounts node $1 and waits up to 60 s for its process, which is killed if it does not end.
unmount_node() {
  local node=$1 mnt=$work/mnt/$1 pid; pid=$(pid_of "$1")
  if alive "$pid"; then kill -CONT "$pid" 2>/dev/null || true; fi
  if grep -qs " $mnt " /proc/mounts; then
    fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -u -z "$mnt" 2>/dev/null || true
  fi
  for _ in $(seq 600); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  for _ in $(seq 100); do alive "$pid" || break; sleep 0.05; done
  if grep -qs " $mnt " /proc/mounts; then fusermount3 -u -z "$mnt" 2>/dev/null || true; fi
  rm -f "$(pidfile "$node")"
}

kill_node() {
  local node=$1 mnt=$work/mnt/$1 pid; pid=$(pid_of "$1")
  if alive "$pid"; then kill -KILL "$pid"; fi
  for _ in $(seq 200); do alive "$pid" || break; sleep 0.02; done
  if grep -qs " $mnt " /proc/mounts; then fusermount3 -u -z "$mnt" 2>/dev/null || true; fi
  rm -f "$(pidfile "$node")"
}

fence_agent() { printf 'action=%s\nplug=%s\n' "$1" "$2" | "$agent"; }

# A fresh filesystem on the export, mounted by every node.
fresh() {
  for node in "${nodes[@]}"; do unmount_node "$node"; done
  for node in "${nodes[@]}"; do fence_agent on "$node"; done
  start_nbd
  for zk in "${zks[@]}"; do start_zk "$zk"; done
  await_zk "${zks[@]}"
  in_ns n1 "$iomap" mkfs --adapter=gfs2-like -o journals=3 --size="$fs_size" --force "$(image)" \
    > "$work/logs/mkfs.log" 2>&1 || die "mkfs failed: $(tail -3 "$work/logs/mkfs.log")"
  for node in "${nodes[@]}"; do mount_node "$node" || die "cannot mount $node"; done
}

# --- commands -------------------------------------------------------------------------------------

cmd_up() {
  local delay=0
  while (($#)); do
    case $1 in
      --delay-us) delay=$2; shift 2 ;;
      *) die "up: unknown option $1" ;;
    esac
  done
  [[ $(id -u) == 0 ]] || die "needs root (network namespaces)"
  trap 'exit 130' INT TERM
  for tool in nbd-server fusermount3 nsenter ss; do command -v "$tool" > /dev/null || die "needs $tool"; done
  [[ -x $iomap ]] || die "no $iomap"
  [[ -f $root/iomap-cli/target/iomap.jar ]] || die "build first: mvn -q install -DskipTests"
  if ip netns list | grep -q "^$prefix-"; then die "already up (bench/cluster-hosts.sh down first)"; fi
  mkdir -p "$work/pids" "$work/logs" "$work/mnt" "$work/runs"
  # A failed `up` removes what it made (no namespace, process or image is left behind).
  trap 'log "up failed: removing what it made"; trap - EXIT; cmd_down' EXIT
  make_networks
  truncate -s $((probe_offset + 1048576)) "$work/disk.img"
  : > "$work/nbd.allow"
  : > "$work/fence.log"
  set_delay "$delay"
  fresh
  trap - EXIT
  log "up: nbd-server on $(sb_addr st), ZooKeeper on $zk_connect, nodes mounted on $work/mnt/{n1,n2,n3}"
}

cmd_down() {
  for node in "${nodes[@]}"; do
    local mnt=$work/mnt/$node
    if grep -qs " $mnt " /proc/mounts; then fusermount3 -u -z "$mnt" 2>/dev/null || true; fi
  done
  # Every process in our namespaces is ours: the ids come from `ip netns pids`.
  for round in 1 2; do
    for host in st "${zks[@]}" "${nodes[@]}"; do
      [[ -e /run/netns/$(ns "$host") ]] || continue
      local pids; pids=$(ip netns pids "$(ns "$host")" 2>/dev/null || true)
      # shellcheck disable=SC2086 # a list of pids
      [[ -z $pids ]] || kill -CONT $pids 2>/dev/null || true
      # shellcheck disable=SC2086
      [[ -z $pids ]] || kill -KILL $pids 2>/dev/null || true
    done
    [[ $round == 2 ]] || sleep 0.5
  done
  if [[ -d $work/pids ]]; then
    for f in "$work"/pids/*.pid; do
      [[ -e $f ]] || continue
      local pid; pid=$(cat "$f")
      if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
  fi
  for host in st "${zks[@]}" "${nodes[@]}"; do
    [[ -e /run/netns/$(ns "$host") ]] && ip netns del "$(ns "$host")"
  done
  for link in $(ip -o link show | awk -F': ' '{ print $2 }' | cut -d@ -f1 | grep "^$prefix-" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  for node in "${nodes[@]}"; do
    local mnt=$work/mnt/$node
    if grep -qs " $mnt " /proc/mounts; then fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt" || true; fi
  done
  rm -rf "$work"
  local left; left=$( (ip netns list | grep "^$prefix-"; ip -o link show | grep -o "$prefix-[a-z0-9-]*") || true)
  [[ -z $left ]] || die "down left: $left"
  log "down: nothing left"
}

# The steps the scenarios are made of (one at a time; the Java driver calls them).
cmd_fault() {
  local action=${1:-} arg=${2:-}
  case $action in
    kill-node) kill_node "$arg" ;;
    stop-node) kill -STOP "$(pid_of "$arg")" ;;
    cont-node) kill -CONT "$(pid_of "$arg")" ;;
    cut) ip link set "$prefix-$3-$arg" nomaster ;;           # cut NODE lk|sb
    heal) ip link set "$prefix-$3-$arg" master "$prefix-$3" ;;
    mount) mount_node "$arg" ;;
    mount-as) # mount-as HOST NODE_ID DIR: a mount with a node id of the caller's choice, in the foreground for
      # at most 60 s (a refused one ends at once), then unmounted
      mkdir -p "$4"
      local rc=0
      in_ns "$arg" timeout 60 "$iomap" mount --adapter gfs2-like --cluster "$(cluster_spec)" --node-id "$3" \
        "$(image)" "$4" < /dev/null || rc=$?
      if grep -qs " $4 " /proc/mounts; then fusermount3 -u -z "$4" 2>/dev/null || true; fi
      return "$rc" ;;
    unmount) unmount_node "$arg" ;;
    fence) fence_agent off "$arg" ;;
    unfence) fence_agent on "$arg" ;;
    fenced) if fence_agent status "$arg"; then echo no; else echo yes; fi ;;
    kill-zk) kill_zk "$arg" ;;
    start-zk) start_zk "$arg"; await_zk "$arg" ;;
    zk-mode) zk_mode "$arg" ;;
    zk-leader) for zk in "${zks[@]}"; do if [[ $(zk_mode "$zk" 2>/dev/null || true) == leader ]]; then echo "$zk"; fi; done ;;
    kill-nbd) kill_nbd ;;
    start-nbd) start_nbd ;;
    fresh) fresh ;;
    probe) # probe NODE ARGS...: the NBD fencing probe from NODE's host
      shift 2
      in_ns "$arg" "$java_home/bin/java" -cp "$testbed_jar" dev.iomap.testbed.NbdProbe "$(sb_addr st)" "$nbd_port" \
        "$export_name" "$@" ;;
    pid) pid_of "$arg" ;;
    *) die "fault: unknown action '$action'" ;;
  esac
}

# Runs the Java driver (bench/testbed) with the test bed's facts.
driver() {
  [[ -f $testbed_jar ]] || die "build the driver first: mvn -q -pl bench/testbed package -DskipTests"
  "$java_home/bin/java" -Xmx1g -Dtestbed.dir="$work" -Dtestbed.script="$root/bench/cluster-hosts.sh" \
    -Dtestbed.probeOffset="$probe_offset" -Dtestbed.image="$work/disk.img" -cp "$testbed_jar" "$@"
}

cmd_test() {
  [[ -d $work/pids ]] || die "not up (bench/cluster-hosts.sh up first)"
  driver dev.iomap.testbed.Scenarios "$@"
}

# Item 6's numbers at each delay: the driver's measurements through the nodes' mounts, then the kernel-side
# baseline, fio's nbd engine writing the same amount from n1's host over the same link (over the
# filesystem: every node is unmounted first, and a fresh filesystem mounted after). $IOMAP_BENCH_SEQ_MIB
# (default 1024) is the sequential write's size, $IOMAP_BENCH_SECONDS (default 5) each measurement's time.
cmd_bench() {
  [[ -d $work/pids ]] || die "not up (bench/cluster-hosts.sh up first)"
  command -v fio > /dev/null || die "needs fio (with the nbd engine) for the baseline"
  local seq_mib=${IOMAP_BENCH_SEQ_MIB:-1024} seconds=${IOMAP_BENCH_SECONDS:-5}
  for us in "${@:-200}" ; do
    set_delay "$us"
    driver -Dtestbed.bench.seqMiB="$seq_mib" -Dtestbed.bench.seconds="$seconds" dev.iomap.testbed.Bench "${us}us"
    for node in "${nodes[@]}"; do unmount_node "$node"; done
    local bw
    bw=$(in_ns n1 fio --name=seq --ioengine=nbd --uri="$(image)" --rw=write --bs=1m --iodepth=8 \
      --size="${seq_mib}m" --end_fsync=1 2>&1 | awk '/WRITE: bw=/ { print $2, $3 }') || true
    echo "delay ${us}us: kernel side: fio nbd engine, sequential write of $seq_mib MiB (1 MiB, iodepth 8, one fsync) ${bw:-failed}"
    fresh
  done
  set_delay 0
}

# up, test, down in one: `down` runs on any exit (a failure, Ctrl-C, a kill by TERM).
cmd_all() {
  trap 'exit 130' INT TERM
  cmd_up "$@"
  trap 'cmd_down' EXIT
  cmd_test
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  all) shift; cmd_all "$@" ;;
  down) cmd_down ;;
  test) shift; cmd_test "$@" ;;
  bench) shift; cmd_bench "$@" ;;
  delay) set_delay "${2:?delay US}" ;;
  fault) shift; cmd_fault "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
