"""Prints every extended attribute under sys.argv[1] (itself included, as "."), sorted by path and
name, as "path name=value": the value in hex, or its length and SHA-256 where longer than 64 bytes.
Links are not followed. Names in the system.* namespace (POSIX ACLs a host may add) are left out
unless sys.argv[2] is "all"."""
import hashlib
import os
import sys

root = sys.argv[1]
everything = len(sys.argv) > 2 and sys.argv[2] == "all"
paths = [root]
for directory, dirs, files in os.walk(root):
    paths.extend(os.path.join(directory, name) for name in dirs + files)
lines = []
for path in paths:
    for attribute in os.listxattr(path, follow_symlinks=False):
        if attribute.startswith("system.") and not everything:
            continue
        value = os.getxattr(path, attribute, follow_symlinks=False)
        shown = value.hex() if len(value) <= 64 else f"{len(value)}:sha256:{hashlib.sha256(value).hexdigest()}"
        lines.append(f"{os.path.relpath(path, root)} {attribute}={shown}")
for line in sorted(lines):
    print(line)
