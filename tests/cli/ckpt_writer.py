#!/usr/bin/env python3
"""ckpt_writer.py — plays the checkpoint writer (launcher/checkpoint/store.h) around real commands, for tests/cli/undo.sh.

  start WS STORE ID       meta, refs, ignored; the checkpoint's time is now
  before WS STORE         stages the workspace: a hard link and a copy of every file that existed at
                          the checkpoint and is not saved yet (what the worker would take)
  after WS STORE          journal records for what the command just run did: "save ... link" for a
                          name that went away or now names another inode (the staged link), "save
                          ... copy" for a file written in place (the staged copy), "dir" for a
                          directory that went, "create" for what is new (kind rename when its inode
                          was another path's)
  end WS STORE [EXIT]     "end" records for every path the journal names; ended=, exit=
  hash WS                 one line per entry: mode, type, sha256 or link target, path (sorted)

The writer's own rules: a path is saved once, and only when it existed at the checkpoint; lines
are whole, paths escaped as store_escape() does.
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time


def esc(p):
    out = []
    for ch in p.encode():
        if ch < 0x20 or ch == 0x7F or ch == 0x25:
            out.append("%%%02X" % ch)
        else:
            out.append(chr(ch) if ch < 0x80 else bytes([ch]).decode("latin-1"))
    return "".join(out)


def walk(ws, ignored):
    """{relpath: lstat} of everything under ws but ignored paths."""
    res = {}
    for root, dirs, files in os.walk(ws):
        for name in dirs + files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, ws)
            if is_ignored(rel, ignored):
                continue
            res[rel] = os.lstat(full)
    return res


def is_ignored(rel, ignored):
    for ig in ignored:
        if ig.endswith("/"):
            if rel == ig[:-1] or rel.startswith(ig):
                return True
        elif rel == ig or rel.startswith(ig + "/"):
            return True
    return False


def load(store):
    with open(os.path.join(store, ".sim", "state.json")) as f:
        return json.load(f)


def save_state(store, st):
    with open(os.path.join(store, ".sim", "state.json"), "w") as f:
        json.dump(st, f)


def append(store, fields):
    line = "\t".join(fields) + "\n"
    fd = os.open(os.path.join(store, "journal"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, line.encode("latin-1") if False else line.encode("utf-8", "surrogateescape"))
    os.close(fd)


def mtime_ns(s):
    return s.st_mtime_ns


def cmd_start(ws, store, sid):
    os.makedirs(os.path.join(store, "objects"), exist_ok=True)
    os.makedirs(os.path.join(store, ".sim"), exist_ok=True)
    os.chmod(store, 0o700)
    started = time.time_ns()
    git = os.path.isdir(os.path.join(ws, ".git"))
    ignored = []
    if git:
        out = subprocess.run(["git", "-C", ws, "ls-files", "--others", "--ignored", "--exclude-standard",
                              "--directory", "-z"], capture_output=True, check=True).stdout
        ignored = [p.decode() for p in out.split(b"\0") if p]
        with open(os.path.join(store, "ignored"), "wb") as f:
            for p in ignored:
                f.write(p.encode() + b"\0")
        refs = subprocess.run(["git", "-C", ws, "for-each-ref", "--format=%(objectname) %(refname)"],
                              capture_output=True, text=True, check=True).stdout
        head = subprocess.run(["git", "-C", ws, "symbolic-ref", "-q", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        stash = subprocess.run(["git", "-C", ws, "log", "-g", "--format=%H", "refs/stash"],
                               capture_output=True, text=True).stdout.split()
        with open(os.path.join(store, "refs"), "w") as f:
            f.write(refs)
            f.write("HEAD ref: %s\n" % head)
            for i, s in enumerate(stash):
                f.write("stash@{%d} %s\n" % (i, s))
    with open(os.path.join(store, "meta"), "w") as f:
        f.write("version=1\nsession=%s\nworkspace=%s\nstarted=%d\nmode=link\nignored=0\ngit=%d\n"
                "command=sh -c 'the agent'\n" % (sid, ws, started, 1 if git else 0))
    at_start = {rel: [s.st_ino, stat.S_ISDIR(s.st_mode), s.st_mode & 0o7777] for rel, s in walk(ws, ignored).items()}
    save_state(store, {"ignored": ignored, "at_start": at_start, "saved": [], "dirs": [],
                       "created": [], "named": [], "next": 1})
    open(os.path.join(store, "lock"), "w").close()


def cmd_before(ws, store):
    st = load(store)
    stage = os.path.join(store, ".sim", "stage")
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(stage)
    staged = {}
    now = walk(ws, st["ignored"])
    saved = set(st["saved"])
    for i, (rel, s) in enumerate(sorted(now.items())):
        if rel not in st["at_start"] or rel in saved or not (stat.S_ISREG(s.st_mode) or stat.S_ISLNK(s.st_mode)):
            continue
        if st["at_start"][rel][0] != s.st_ino:
            continue  # not the checkpoint's file any more (the writer saves that only)
        link = os.path.join(stage, "%d.link" % i)
        copy = os.path.join(stage, "%d.copy" % i)
        os.link(os.path.join(ws, rel), link, follow_symlinks=False)
        if stat.S_ISREG(s.st_mode):
            shutil.copy2(os.path.join(ws, rel), copy, follow_symlinks=False)
        ctime = os.lstat(os.path.join(ws, rel)).st_ctime_ns  # the link just made moved it
        staged[rel] = {"i": i, "ino": s.st_ino, "size": s.st_size, "mtime": s.st_mtime_ns,
                       "mode": s.st_mode, "ctime": ctime}
    dirs = {rel: s.st_ino for rel, s in now.items() if stat.S_ISDIR(s.st_mode)}
    inodes = {s.st_ino: rel for rel, s in now.items()}
    st["staged"] = staged
    st["before_dirs"] = dirs
    st["before_inodes"] = {str(k): v for k, v in inodes.items()}
    st["before_paths"] = sorted(now)
    save_state(store, st)


def named(st, rel):
    if rel not in st["named"]:
        st["named"].append(rel)


def cmd_after(ws, store):
    st = load(store)
    stage = os.path.join(store, ".sim", "stage")
    now = walk(ws, st["ignored"])
    saved = set(st["saved"])
    for rel, x in sorted(st["staged"].items()):
        cur = now.get(rel)
        link = os.path.join(stage, "%d.link" % x["i"])
        copy = os.path.join(stage, "%d.copy" % x["i"])
        how = None
        if cur is None or cur.st_ino != x["ino"]:
            ls = os.lstat(link)
            how = "link" if ls.st_mtime_ns == x["mtime"] and ls.st_size == x["size"] else "copy"
        elif cur.st_ctime_ns != x["ctime"]:
            how = "copy"  # written in place (or its mode changed): the copy taken before
        if not how or rel in saved:
            continue
        obj = st["next"]
        st["next"] += 1
        dst = os.path.join(store, "objects", str(obj))
        if how == "link":
            os.rename(link, dst)
        else:
            os.rename(copy, dst)
        mode = x["mode"] if stat.S_ISLNK(x["mode"]) else x["mode"] & 0o7777
        append(store, ["save", str(obj), how, "%o" % mode, str(x["size"]), str(x["mtime"]), esc(rel)])
        st["saved"].append(rel)
        saved.add(rel)
        named(st, rel)
    for rel, ino in sorted(st["before_dirs"].items()):
        cur = now.get(rel)
        if rel in st["at_start"] and rel not in st["dirs"] and (cur is None or cur.st_ino != ino):
            append(store, ["dir", "%o" % st["at_start"][rel][2], esc(rel)])
            st["dirs"].append(rel)
            named(st, rel)
    for rel, s in sorted(now.items()):
        if rel in st["created"] or (rel in st["at_start"] and s.st_ino == st["at_start"][rel][0]):
            continue
        kind = ("dir" if stat.S_ISDIR(s.st_mode) else "symlink" if stat.S_ISLNK(s.st_mode)
                else "rename" if str(s.st_ino) in st["before_inodes"] and st["before_inodes"][str(s.st_ino)] != rel
                else "file")
        append(store, ["create", kind, esc(rel)])
        st["created"].append(rel)
        named(st, rel)
    shutil.rmtree(stage, ignore_errors=True)
    save_state(store, st)


def typ(s):
    return "f" if stat.S_ISREG(s.st_mode) else "d" if stat.S_ISDIR(s.st_mode) else "l" if stat.S_ISLNK(s.st_mode) else "o"


def cmd_end(ws, store, status="0"):
    st = load(store)
    for rel in st["named"]:
        try:
            s = os.lstat(os.path.join(ws, rel))
            append(store, ["end", typ(s), str(s.st_ino), str(s.st_size), str(s.st_mtime_ns), esc(rel)])
        except FileNotFoundError:
            append(store, ["end", "-", "0", "0", "0", esc(rel)])
    with open(os.path.join(store, "meta"), "a") as f:
        f.write("ended=%d\nexit=%s\n" % (time.time_ns(), status))
    shutil.rmtree(os.path.join(store, ".sim"))


def cmd_hash(ws):
    lines = []
    for root, dirs, files in os.walk(ws):
        for name in dirs + files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, ws)
            s = os.lstat(full)
            if stat.S_ISREG(s.st_mode):
                with open(full, "rb") as f:
                    what = hashlib.sha256(f.read()).hexdigest()
            elif stat.S_ISLNK(s.st_mode):
                what = "-> " + os.readlink(full)
            else:
                what = "dir"
            lines.append("%o %s %s" % (s.st_mode, what, rel))
    for l in sorted(lines):
        print(l)


def main():
    a = sys.argv[1:]
    if a[0] == "start":
        cmd_start(a[1], a[2], a[3])
    elif a[0] == "before":
        cmd_before(a[1], a[2])
    elif a[0] == "after":
        cmd_after(a[1], a[2])
    elif a[0] == "end":
        cmd_end(a[1], a[2], *a[3:])
    elif a[0] == "hash":
        cmd_hash(a[1])
    else:
        sys.exit("unknown command")


main()
