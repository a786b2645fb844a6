#!/usr/bin/env bash
# Runs git in $1 (which must not exist yet): init, add, two commits, gc, fsck --full, a local clone
# (hard links to the objects where the file system has them) and fsck --full of the clone. Prints the
# two commit ids and the root tree id, which are the same on every file system where git works:
# dates, names and bytes are fixed. FEATURES as in make-tree.sh: "links" adds a symbolic link,
# "attrs" an executable file. Reads no system or global git configuration and writes none.
set -euo pipefail
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_DATE='2024-01-02T03:04:05Z' GIT_COMMITTER_DATE='2024-01-02T03:04:05Z'
features=" ${FEATURES-links attrs} "
has() { [[ $features == *" $1 "* ]]; }
g() { git -c user.name='Real Tools' -c user.email=realtools@example.invalid -c init.defaultBranch=main \
    -c gc.auto=0 "$@"; }
bytes() { python3 -c 'import random, sys; random.seed(int(sys.argv[1])); sys.stdout.buffer.write(random.randbytes(int(sys.argv[2])))' "$1" "$2"; }

mkdir "$1"
cd "$1"
g init -q
mkdir -p src/main docs
for i in $(seq 1 40); do
    printf 'line %d of file %d\n' $(seq 1 $((i * 3))) > "src/main/file$i.txt"
done
bytes 11 300000 > docs/blob.bin
printf '# readme\n' > README
if has links; then
    ln -s src/main/file1.txt link-to-file1
fi
if has attrs; then
    printf '#!/bin/sh\necho run\n' > run.sh
    chmod 0755 run.sh
fi
g add -A
g commit -q -m first
printf 'changed\n' >> src/main/file7.txt
bytes 12 70000 > docs/second.bin
g add -A
g commit -q -m second
g gc -q
g fsck --full --strict --no-progress
test -z "$(g status --porcelain)"
test "$(g count-objects -v | sed -n 's/^count: //p')" = 0
g clone -q . ../"$(basename "$1")-clone"
g -C ../"$(basename "$1")-clone" fsck --full --strict --no-progress
cmp docs/blob.bin ../"$(basename "$1")-clone"/docs/blob.bin
g rev-parse HEAD HEAD~1 'HEAD^{tree}'
