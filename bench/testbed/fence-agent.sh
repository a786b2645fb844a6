#!/usr/bin/env bash
# The test bed's fence agent (bench/cluster-hosts.sh): keeps a node's host off the shared NBD export, as
# a storage-side fence (fence_scsi's role; NBD has no persistent reservations). Called as cluster managers
# call fence agents: options as name=value lines on standard input, exit status 0 when done.
#
#   action=off plug=NODE   take the node's storage address out of nbd-server's access list (its authfile,
#                          read at every new connection) and kill every nbd-server process serving a
#                          connection from that address, waiting until they are gone: from then on no
#                          byte that host sent or sends reaches the export (a segment still on its way
#                          finds no socket and is answered with a reset; a new connection is refused)
#   action=on  plug=NODE   put it back (unfencing, before the node mounts again)
#   action=status plug=NODE  exit 0 if the node may reach the storage, 2 if it is fenced
#
# A node's iomap mount runs it (zk=...?fence=THIS) before replaying a dead node's journal; bench/cluster-hosts.sh
# runs it to unfence. Every action is logged in $IOMAP_TESTBED_DIR/fence.log as "EPOCH_NS ACTION NODE INCARNATION".
set -euo pipefail
work=${IOMAP_TESTBED_DIR:-/tmp/iomap-testbed}
ns_storage=iomtb-st
nbd_port=10809

action= plug= incarnation=-
while IFS='=' read -r key value; do
  case $key in
    action) action=$value ;;
    plug|port|nodename) plug=$value ;;
    incarnation) incarnation=$value ;;
  esac
done
address=$(awk -v node="$plug" '$1 == node { print $2 }' "$work/storage-hosts" 2>/dev/null || true)
if [[ -z $address ]]; then
  echo "fence-agent: no host named '$plug' in $work/storage-hosts" >&2
  exit 1
fi

exec 9>> "$work/fence.lock"
flock 9

# The pids of nbd-server processes with a connection from $address (any state but listening), never the
# listening server itself (it holds an accepted socket for a moment before its child takes it over). No
# match is no output and success (under pipefail, grep's "nothing found" would end the agent with 1).
serving() {
  local listener; listener=$(cat "$work/nbd.pid" 2>/dev/null || true)
  { nsenter --net="/run/netns/$ns_storage" ss -Htnp state all "( sport = :$nbd_port )" dst "$address" 2>/dev/null \
    | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | grep -vx "${listener:-none}"; } || true
}

case $action in
  off)
    { grep -vx "$address" "$work/nbd.allow" || true; } > "$work/nbd.allow.new"
    mv "$work/nbd.allow.new" "$work/nbd.allow"
    quiet=0
    for _ in $(seq 500); do
      pids=$(serving)
      if [[ -z $pids ]]; then
        quiet=$((quiet + 1))
        if ((quiet >= 2)); then break; fi
      else
        quiet=0
        # shellcheck disable=SC2086 # a list of pids
        kill -KILL $pids 2>/dev/null || true
      fi
      sleep 0.02
    done
    if [[ -n $(serving) ]]; then
      echo "fence-agent: connections from $address (node $plug) are still served" >&2
      exit 1
    fi
    ;;
  on)
    grep -qx "$address" "$work/nbd.allow" || echo "$address" >> "$work/nbd.allow"
    ;;
  status)
    if grep -qx "$address" "$work/nbd.allow"; then exit 0; else exit 2; fi
    ;;
  *)
    echo "fence-agent: action '$action' is not off, on or status" >&2
    exit 1
    ;;
esac
echo "$(date +%s%N) $action $plug $incarnation" >> "$work/fence.log"
