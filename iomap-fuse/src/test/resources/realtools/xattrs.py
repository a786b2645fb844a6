"""Prints every extended attribute under sys.argv[1] (itself included, as "."), sorted by path and
name, as "path name=value": the value in hex, or its length and SHA-256 where longer than 64 bytes.
Links are not followed. Names in the system.* namespace (POSIX ACLs a host may add) are left out
unless sys.argv[2] is "all". A path whose xattrs cannot be read is reported on standard error,
and the exit status is then 1."""
import hashlib
import os
import sys

root = sys.argv[1]
everything = len(sys.argv) > 2 and sys.argv[2] == "all"
paths = [root]
for directory, dirs, files in os.walk(root):
    paths.extend(os.path.join(directory, name) for name in dirs + files)
lines = []
errors = 0
for path in paths:
    try:
        attributes = os.listxattr(path, follow_symlinks=False)
    except OSError as e:
        errors += 1
        print(f"listxattr {path}: {e.strerror}", file=sys.stderr)
        continue
    for attribute in attributes:
        if attribute.startswith("system.") and not everything:
            continue
        try:
            value = os.getxattr(path, attribute, follow_symlinks=False)
        except OSError as e:
            errors += 1
            print(f"getxattr {path} {attribute}: {e.strerror}", file=sys.stderr)
            continue
        shown = value.hex() if len(value) <= 64 else f"{len(value)}:sha256:{hashlib.sha256(value).hexdigest()}"
        lines.append(f"{os.path.relpath(path, root)} {attribute}={shown}")
for line in sorted(lines):
    print(line)
sys.exit(1 if errors else 0)
