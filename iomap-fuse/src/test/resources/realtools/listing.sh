#!/usr/bin/env bash
# Prints every entry under $1 (itself included, as "."), sorted, one a line:
#   path type mode links size mtime link-target uid gid
# with mtime in seconds and nanoseconds; with $2 = "content", only path type size (what a copy that
# keeps no attributes must still get right). A directory's size is "-": it is the file system's own
# business (ext4 says 4096), not something a copy carries.
set -euo pipefail
cd "$1"
if [[ ${2-} == content ]]; then
    find . \( -type d -printf '%p %y -\n' \) -o -printf '%p %y %s\n' | LC_ALL=C sort
else
    find . \( -type d -printf '%p %y %m %n - %T@ %l %U %G\n' \) -o -printf '%p %y %m %n %s %T@ %l %U %G\n' \
        | LC_ALL=C sort
fi
