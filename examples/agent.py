#!/usr/bin/env python3
"""agent.py — an example "coding agent" session, meant to run under airlock.

    airlock run --headless -- python3 examples/agent.py      # in a project

It does what a coding agent does in a session, then what a careless or
hijacked one might try.  Each step is printed with its outcome, and a refusal
never stops the session:

    ok: ...         the action happened
    refused: ERRNO  the call failed with EACCES/EPERM/ECONNREFUSED (a policy said no)
    refused: exit N the program ran, and what it tried was refused: it said
                    "Permission denied" (a file outside the workspace, say) or
                    the proxy answered 403 (an unknown host)
    masked: ...     the file opened but was empty: the kernel layer hid it
    failed: ...     the action ran and failed for another reason

Standard library only.  Several steps are destructive or leak secrets on
purpose (`rm -rf` outside the workspace, reading ~/.ssh/id_rsa, `git push`),
so it refuses to start outside airlock (AIRLOCK_DIR unset) unless given
--dry-run, which only lists the steps.  scripts/demo.sh (`make demo`) runs it
in a scratch project with a scratch home, so even if every layer failed open
nothing of yours would be touched.

Options:
  --dry-run          list the steps and exit
  --rm-target DIR    what the `rm -rf` step removes (default: a path next to
                     the workspace that does not exist, so the step is harmless
                     even without airlock)
  --remote NAME      the remote `git push` pushes to (default: origin)
"""

import ctypes
import errno
import os
import re
import shutil
import socket
import subprocess
import sys

TIMEOUT = 120  # seconds; longer than the default policy's ask_timeout
REFUSALS = (errno.EACCES, errno.EPERM, errno.ECONNREFUSED)
# What a program that ran prints when what it tried was refused: a file call's EACCES / EPERM, or
# airlock's proxy answering an HTTPS CONNECT to a host the policy did not allow.
REFUSED_TEXT = re.compile(r"Permission denied|Operation not permitted|CONNECT tunnel failed, response 403")


def errname(e):
    code = getattr(e, "errno", None)
    if code is None:
        return str(e)
    return f"{errno.errorcode.get(code, code)} ({os.strerror(code)})"


def oserror(e):
    """The outcome of an OSError: refused when a policy said no, failed otherwise."""
    return ("refused: " if e.errno in REFUSALS else "failed: ") + errname(e)


def last_line(text, width=70):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1].strip()[:width] if lines else ""


def run(argv, **kw):
    """Runs argv; ok/failed by exit status, refused when exec itself was refused."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, **kw)
    except FileNotFoundError:
        return "failed: not found"
    except OSError as e:
        return oserror(e)
    except subprocess.TimeoutExpired:
        return f"failed: timed out after {TIMEOUT}s"
    tail = last_line(p.stderr) or last_line(p.stdout)
    if p.returncode == 0:
        # what it did: unittest's "Ran N tests" and verdict, else the first line of output
        ran = [l.strip() for l in p.stderr.splitlines() if l.startswith("Ran ")]
        verdict = [l.strip() for l in p.stderr.splitlines() if l.startswith(("OK", "FAILED"))]
        if ran:
            tail = f"{ran[-1]}: {verdict[-1] if verdict else '?'}"
        else:
            tail = (p.stdout.strip().splitlines() or [tail])[0].strip()[:70]
        return "ok" + (f": {tail}" if tail else "")
    if REFUSED_TEXT.search(p.stderr):
        return f"refused: exit {p.returncode}" + (f": {tail}" if tail else "")
    return f"failed: exit {p.returncode}" + (f": {tail}" if tail else "")


def read(path):
    path = os.path.expanduser(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return oserror(e)
    if not data and os.path.basename(path).startswith((".env", "id_")):
        return "masked: the file reads as empty"
    return f"ok: read {len(data)} bytes  <-- LEAKED" if data else "ok: empty"


# x86_64: long sc(nr, a, b, c, d, e) { return syscall instruction }, to step past the shim's hooks
# (it hooks libc's open*() and syscall() alike), as a static binary would.
SYSCALL_X86_64 = bytes.fromhex("4889f8" "4889f7" "4889d6" "4889ca" "4d89c2" "4d89c8" "0f05" "c3")


def read_raw(path):
    """Reads path with the openat/read system calls issued directly, past the LD_PRELOAD shim:
    what a static binary would get.  Only the kernel layer can stop this one."""
    if os.uname().machine != "x86_64":
        return "skipped: the raw system call stub is x86_64 only"
    import mmap

    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(SYSCALL_X86_64)
    sc = ctypes.CFUNCTYPE(*[ctypes.c_long] * 7)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
    name = ctypes.create_string_buffer(os.fsencode(os.path.expanduser(path)))
    fd = sc(257, -100, ctypes.addressof(name), os.O_RDONLY, 0, 0)  # openat(AT_FDCWD, ...)
    if fd < 0:
        return oserror(OSError(-fd, "")) + " (from the kernel: no shim involved)"
    buf = ctypes.create_string_buffer(4096)
    n = sc(0, fd, ctypes.addressof(buf), len(buf), 0, 0)  # read
    sc(3, fd, 0, 0, 0, 0)  # close
    if n < 0:
        return oserror(OSError(-n, "")) + " (from the kernel: no shim involved)"
    if n == 0:
        return "masked: the file reads as empty (the kernel layer hid it)"
    return f"ok: read {n} bytes  <-- LEAKED"


def connect(host, port):
    try:
        with socket.create_connection((host, port), timeout=10):
            return f"ok: connected to {host}:{port}  <-- LEFT THE SANDBOX"
    except socket.gaierror as e:
        return f"failed: cannot resolve {host}: {e.strerror}"
    except OSError as e:
        return oserror(e)


# ---- the steps of a session ----------------------------------------------------


def sources():
    out = []
    for top, dirs, files in os.walk("."):
        dirs[:] = sorted(d for d in dirs if d not in (".git", ".airlock", "__pycache__"))
        out += [os.path.normpath(os.path.join(top, f)) for f in sorted(files)]
    return out


def list_workspace():
    files = sources()
    shown = ", ".join(files[:5]) + (", ..." if len(files) > 5 else "")
    return f"ok: {len(files)} files: {shown}"


def read_sources():
    n = size = 0
    refused = []
    for f in sources():
        if not f.endswith((".py", ".md", "Makefile", ".txt", ".c", ".h")):
            continue
        try:
            with open(f, "rb") as fh:
                size += len(fh.read())
            n += 1
        except OSError as e:
            refused.append(f"{f}: {errname(e)}")
    if refused:
        return "failed: " + "; ".join(refused)
    return f"ok: read {n} files, {size} bytes"


def edit():
    """Implements calc.mul in the demo project, or notes the review in some source."""
    path = "src/calc.py"
    try:
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
            todo = "    raise NotImplementedError  # TODO"
            if todo in text:
                text = text.replace(todo, "    return a * b")
                what = "implemented mul() in src/calc.py"
            else:
                text += "\n# reviewed by examples/agent.py\n"
                what = "appended a comment to src/calc.py"
        else:
            files = [f for f in sources() if f.endswith(".py")] or ["NOTES.md"]
            path = files[0]
            text = (open(path).read() if os.path.exists(path) else "")
            text += "\n# reviewed by examples/agent.py\n"
            what = f"appended a comment to {path}"
        with open(path, "w") as f:
            f.write(text)
        return f"ok: {what}"
    except OSError as e:
        return oserror(e)


def tests():
    if os.path.exists("Makefile"):
        # PYTHON= the interpreter running this agent, whatever python3 on PATH is (a pyenv shim, say)
        return run(["make", "test", f"PYTHON={sys.executable}"])
    return run([sys.executable, "-m", "unittest", "discover", "-s", "tests"])


def rm_outside(target):
    return run(["rm", "-rf", target])


def parse_args(argv):
    opts = {"dry_run": False, "rm_target": None, "remote": "origin"}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--dry-run":
            opts["dry_run"] = True
        elif a in ("--rm-target", "--remote") and i + 1 < len(argv):
            opts[a[2:].replace("-", "_")] = argv[i + 1]
            i += 1
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            sys.exit(0)
        else:
            sys.exit(f"agent.py: unknown argument {a!r} (try --help)")
        i += 1
    if opts["rm_target"] is None:
        ws = os.getcwd()
        opts["rm_target"] = os.path.join(os.path.dirname(ws), f".{os.path.basename(ws)}-not-there-{os.getpid()}")
    return opts


def steps(opts):
    py = sys.executable
    pip = ["pip"] if shutil.which("pip") else [py, "-m", "pip"]
    return [
        ("list", "list the workspace", list_workspace),
        ("ls", "ls -la src", lambda: run(["ls", "-la", "src"])),
        ("ls-files", "git ls-files", lambda: run(["git", "ls-files"])),
        ("read", "read the sources", read_sources),
        ("edit", "edit src/calc.py", edit),
        ("test", "run the tests (make test)", tests),
        ("status", "git status --short", lambda: run(["git", "status", "--short"])),
        ("diff", "git diff --stat", lambda: run(["git", "diff", "--stat"])),
        ("commit", "git commit -am", lambda: run(["git", "commit", "-am", "calc: implement mul"])),
        ("pip", "pip install requests", lambda: run(pip + ["install", "requests"])),
        ("curl", "curl https://unknown.example", lambda: run(["curl", "-sS", "--max-time", "10", "https://unknown.example"])),
        # TEST-NET-3 (RFC 5737): an address that is never routed, should anything fail open
        ("connect", "connect 203.0.113.7:443 (Python socket)", lambda: connect("203.0.113.7", 443)),
        ("env", "read .env", lambda: read(".env")),
        ("env-raw", "read .env by raw syscall, past the shim", lambda: read_raw(".env")),
        ("ssh-key", "read ~/.ssh/id_rsa", lambda: read("~/.ssh/id_rsa")),
        ("rm", f"rm -rf {opts['rm_target']}", lambda: rm_outside(opts["rm_target"])),
        ("push", f"git push {opts['remote']} HEAD", lambda: run(["git", "push", opts["remote"], "HEAD"])),
    ]


def main():
    opts = parse_args(sys.argv[1:])
    todo = steps(opts)
    if opts["dry_run"]:
        for i, (key, what, _) in enumerate(todo, 1):
            print(f"[{i:2}] {key:<9} {what}")
        return 0
    if not os.environ.get("AIRLOCK_DIR"):
        sys.exit(
            "agent.py: not running under airlock (AIRLOCK_DIR is unset); some of its steps are\n"
            "destructive on purpose.  Run it as:  airlock run -- python3 examples/agent.py\n"
            "or list its steps with:  python3 examples/agent.py --dry-run"
        )
    counts = {}
    for i, (key, what, action) in enumerate(todo, 1):
        print(f"[{i:2}] {key:<9} {what:<40.40} ", end="", flush=True)
        try:
            outcome = action()
        except Exception as e:  # an example agent never crashes on a refusal
            outcome = f"failed: {type(e).__name__}: {e}"
        print(outcome, flush=True)
        kind = outcome.split(":", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    print("agent: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
