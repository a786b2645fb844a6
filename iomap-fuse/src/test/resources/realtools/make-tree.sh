#!/usr/bin/env bash
# Builds the source tree of RealToolsTest in $1 (a directory that must not exist yet); runs as root
# (chown). FEATURES (words, default "links attrs xattrs") leaves out what a file system cannot hold:
#   links   symbolic links (relative, absolute into the tree, dangling, to a directory) and a file
#           with three hard links
#   attrs   modes 0600 0444 0755 04755, a 1777 sticky and a 2755 setgid directory, owners
#           1234:5678 and 4321:8765, and a distinct mtime with nanoseconds on every entry
#   xattrs  user.* extended attributes on files and a directory (empty, binary and 2000-byte values)
# The bytes are the same on every run: they come from a seeded generator.
set -euo pipefail
root=$1
features=" ${FEATURES-links attrs xattrs} "
has() { [[ $features == *" $1 "* ]]; }
bytes() { python3 -c 'import random, sys; random.seed(int(sys.argv[1])); sys.stdout.buffer.write(random.randbytes(int(sys.argv[2])))' "$1" "$2"; }

mkdir "$root"
cd "$root"
mkdir -p files deep/a/b/c/d empty-dir
: > files/empty
printf 'x' > files/one
bytes 1 4095 > files/block-minus-one
bytes 2 4096 > files/block
bytes 3 4097 > files/block-plus-one
bytes 4 65537 > files/odd-64k
bytes 5 $((1024 * 1024 + 3)) > deep/a/b/c/d/mib-plus-three
bytes 6 $((3 * 1024 * 1024 + 123)) > deep/big.bin
printf 'text with a space\n' > 'files/with space'
printf 'unicode name\n' > files/ünïcödé
# A 16 MiB file with three written blocks: at 0, at 5 MiB + 1000 (straddling two blocks) and the last.
truncate -s 16M files/sparse.bin
bytes 7 4096 | dd of=files/sparse.bin bs=4096 seek=0 conv=notrunc status=none
bytes 8 5000 | dd of=files/sparse.bin bs=1 seek=$((5 * 1024 * 1024 + 1000)) conv=notrunc status=none
bytes 9 4096 | dd of=files/sparse.bin bs=4096 seek=$((16 * 256 - 1)) conv=notrunc status=none

if has links; then
    printf 'three names\n' > files/hard1
    ln files/hard1 files/hard2
    ln files/hard1 deep/a/hard3
    ln -s one files/rel-link
    ln -s ../../../files/one deep/a/b/up-link
    ln -s "$root/files/block" files/abs-link
    ln -s no/such/file files/dangling-link
    ln -s deep/a dir-link
fi

if has attrs; then
    mkdir sticky setgid
    chmod 1777 sticky
    chmod 2755 setgid
    mkdir setgid/inherits
    printf 'in sticky\n' > sticky/f
    printf 'private\n' > files/private
    printf 'read only\n' > files/read-only
    printf '#!/bin/sh\necho hi\n' > files/exec
    printf '#!/bin/sh\necho setuid\n' > files/setuid
    chown 1234:5678 files/private files/setuid
    chown 4321:8765 deep/a
    chmod 0600 files/private
    chmod 0444 files/read-only
    chmod 0755 files/exec
    chmod 04755 files/setuid
    chmod 0700 deep/a/b
    if has links; then
        chown -h 1234:5678 files/rel-link
    fi
fi

if has xattrs; then
    setfattr -n user.color -v blue files/one
    setfattr -n user.empty files/one
    setfattr -n user.binary -v 0x00ff10fe00 files/block
    setfattr -n user.big -v "$(printf 'v%.0s' {1..2000})" deep/big.bin
    setfattr -n user.dir -v 'on a directory' deep/a
    if has links; then
        setfattr -n user.linked -v 'seen from all three names' files/hard1
    fi
fi

if has attrs; then
    # Children before parents (find -depth), so a directory's time is set after its entries change.
    i=0
    while IFS= read -r -d '' path; do
        i=$((i + 1))
        touch -h -d "@$((1600000000 + i * 86413)).$(printf '%09d' $((i * 123456791 % 1000000000)))" "$path"
    done < <(find . -depth -print0)
fi
