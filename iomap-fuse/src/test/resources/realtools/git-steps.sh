#!/usr/bin/env bash
# One git step of RealToolsGitAndSparseTest on the repository $2, as named by $1:
#   make   creates $2 (which must not exist yet): git init, add and two commits
#   gc     git gc, which packs every object (count-objects then says 0 loose ones)
#   fsck   git fsck --full --strict and a clean git status
#   clone  git clone of $2 to $2-clone (hard links to the objects where the file system has them),
#          then git fsck --full --strict of the clone and cmp of a checked-out file
#   ids    prints the two commit ids and the root tree id: the same on every file system where git
#          works, as dates, names and bytes are fixed
# FEATURES as in make-tree.sh: "links" adds a symbolic link, "attrs" an executable file. Reads no
# system or global git configuration and writes none.
set -euo pipefail
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_DATE='2024-01-02T03:04:05Z' GIT_COMMITTER_DATE='2024-01-02T03:04:05Z'
features=" ${FEATURES-links attrs} "
has() { [[ $features == *" $1 "* ]]; }
g() { git -c user.name='Real Tools' -c user.email=realtools@example.invalid -c init.defaultBranch=main \
    -c gc.auto=0 "$@"; }
bytes() { python3 -c 'import random, sys; random.seed(int(sys.argv[1])); sys.stdout.buffer.write(random.randbytes(int(sys.argv[2])))' "$1" "$2"; }
repo=$2

case $1 in
make)
    mkdir "$repo"
    cd "$repo"
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
    ;;
gc)
    cd "$repo"
    g gc -q
    count=$(g count-objects -v | sed -n 's/^count: //p')
    [[ $count == 0 ]] || { echo "git count-objects: $count loose objects after gc" >&2; exit 1; }
    ;;
fsck)
    cd "$repo"
    g fsck --full --strict --no-progress
    status=$(g status --porcelain)
    [[ -z $status ]] || { echo "git status is not clean: $status" >&2; exit 1; }
    ;;
clone)
    g clone -q "$repo" "$repo-clone"
    g -C "$repo-clone" fsck --full --strict --no-progress
    cmp "$repo/docs/blob.bin" "$repo-clone/docs/blob.bin"
    ;;
ids)
    g -C "$repo" rev-parse HEAD HEAD~1 'HEAD^{tree}'
    ;;
*)
    echo "unknown step $1" >&2
    exit 2
    ;;
esac
