#!/usr/bin/env python3
"""agent.py — an example "agent" that really performs the actions of examples/agent_actions.txt.

Meant to run under airlock, which decides each action:

    airlock run -- python3 examples/agent.py

It runs programs with subprocess, opens files with open() and connects with
urllib, and prints what happened to each (ran, refused, failed).  Some of the
actions are destructive on purpose (`rm -rf /`, `git push`), so it refuses to
start outside airlock (no AIRLOCK_DIR in the environment) unless --dry-run is
given, which only lists the actions.  Standard library only.
"""

import os
import subprocess
import sys
import urllib.error
import urllib.request

TIMEOUT = 120  # seconds; longer than the default policy's ask_timeout


def run(argv):
    """Runs argv, returns a one-line account of what happened."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT)
    except FileNotFoundError:
        return "not found"
    except PermissionError as e:
        return f"refused: {e.strerror}"
    except subprocess.TimeoutExpired:
        return f"timed out after {TIMEOUT}s"
    out = (p.stderr or p.stdout).strip().splitlines()
    return f"exit {p.returncode}" + (f": {out[-1][:100]}" if out else "")


def read(path):
    try:
        with open(os.path.expanduser(path), encoding="utf-8", errors="replace") as f:
            return f"read {len(f.read())} characters"
    except OSError as e:
        return f"refused: {e.strerror}" if e.errno in (1, 13) else f"failed: {e.strerror}"


def write(path):
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write("# touched by examples/agent.py\n")
        return "written"
    except OSError as e:
        return f"refused: {e.strerror}" if e.errno in (1, 13) else f"failed: {e.strerror}"


def connect(url):
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as r:
            return f"HTTP {r.status}"
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code} (connected)"
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        return f"failed: {reason}"


# The same actions, in the same order, as examples/agent_actions.txt.
ACTIONS = [
    ("run the tests", run, ["make", "test"]),
    ("git status", run, ["git", "status", "--short"]),
    ("git diff", run, ["git", "diff"]),
    ("git commit", run, ["git", "commit", "-m", "x"]),
    ("write src/app.py", write, "src/app.py"),
    ("pip install requests", run, ["pip", "install", "requests"]),
    ("connect to unknown.example", connect, "https://unknown.example/"),
    ("curl unknown.example", run, ["curl", "-sS", "https://unknown.example"]),
    ("read .env", read, ".env"),
    ("read ~/.ssh/id_rsa", read, "~/.ssh/id_rsa"),
    # GNU rm refuses "/" anyway (--preserve-root is its default); the policy must refuse first.
    ("rm -rf /", run, ["rm", "-rf", "/"]),
    ("git push origin main", run, ["git", "push", "origin", "main"]),
    ("connect to api.anthropic.com", connect, "https://api.anthropic.com/"),
]


def main():
    dry_run = "--dry-run" in sys.argv[1:]
    if not dry_run and not os.environ.get("AIRLOCK_DIR"):
        sys.exit(
            "agent.py: not running under airlock (AIRLOCK_DIR is unset); some of its actions\n"
            "are destructive on purpose.  Run it as:  airlock run -- python3 examples/agent.py\n"
            "or list its actions with:  python3 examples/agent.py --dry-run"
        )
    for i, (what, action, arg) in enumerate(ACTIONS, 1):
        if dry_run:
            print(f"[{i:2}] {what}")
            continue
        print(f"[{i:2}] {what:30} ... ", end="", flush=True)
        print(action(arg), flush=True)


if __name__ == "__main__":
    main()
