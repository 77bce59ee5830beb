#!/usr/bin/python3
"""treehash.py -- what a workspace holds, as one hash: the undo tests and benchmark compare it
before a session and after `airlock undo`.

Usage: treehash.py DIR [--exclude REL]... [--exclude-glob GLOB]... [--list]

Walks DIR (including .git, never following symlinks) and hashes, sorted by path relative to
DIR, one line per entry:
    f MODE SHA256 PATH      a regular file: its permission bits (octal) and its bytes
    d MODE - PATH           a directory
    l - TARGET PATH         a symlink (its target, not followed)
    o MODE - PATH           anything else (fifo, socket, device)
Timestamps, owners and inode numbers are not part of it (undo restores bytes, names and
modes).  --exclude REL leaves out REL and everything beneath it (a path relative to DIR, e.g.
the .gitignore'd directory a checkpoint does not cover); --exclude-glob leaves out entries whose
name matches GLOB (fnmatch, e.g. '*.airlock-kept-*').  Prints the SHA-256 of the lines, or with
--list the lines themselves.  Exits 2 on a usage error or when DIR is not a directory.
"""
import fnmatch
import hashlib
import os
import stat
import sys


def fail(err):
    raise err


def entries(top, excludes, globs):
    out = []
    for root, dirs, files in os.walk(top, followlinks=False, onerror=fail):
        rel_root = os.path.relpath(root, top)
        keep = []
        for name in sorted(dirs + files):
            rel = name if rel_root == "." else rel_root + "/" + name
            if rel in excludes or any(fnmatch.fnmatchcase(name, g) for g in globs):
                continue
            path = os.path.join(root, name)
            st = os.lstat(path)
            mode = "%04o" % stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                out.append((rel, "d %s - %s" % (mode, rel)))
                keep.append(name)
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                out.append((rel, "f %s %s %s" % (mode, h.hexdigest(), rel)))
            elif stat.S_ISLNK(st.st_mode):
                out.append((rel, "l - %s %s" % (os.readlink(path), rel)))
            else:
                out.append((rel, "o %s - %s" % (mode, rel)))
        dirs[:] = [d for d in dirs if d in keep]
    return [line for _, line in sorted(out)]


def main(argv):
    top, excludes, globs, listing = None, set(), [], False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--exclude", "--exclude-glob") and i + 1 < len(argv):
            (excludes.add(argv[i + 1].strip("/")) if a == "--exclude" else globs.append(argv[i + 1]))
            i += 2
            continue
        if a == "--list":
            listing = True
        elif top is None and not a.startswith("--"):
            top = a
        else:
            top = None
            break
        i += 1
    if top is None or not os.path.isdir(top):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    lines = entries(top, excludes, globs)
    if listing:
        sys.stdout.write("".join(line + "\n" for line in lines))
    else:
        print(hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
