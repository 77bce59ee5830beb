#!/usr/bin/env python3
"""corpus.py — runs the corpus of real agents' commands bare and under `airlock run --headless`.

Usage: corpus.py AIRLOCK SCRATCH [--jobs N] [--only ID...]
Each benign command (benign.jsonl) runs twice in a fresh copy of the fixture (fixture.py): bare,
then under `airlock run --headless` with the built-in default policy and a scratch HOME, both in a
network namespace of their own (`unshare -n`: no packet leaves).  Outcomes are compared, not exit
codes alone: the exit status class, stdout (the scratch path and times normalised), the workspace
tree (paths, modes, content hashes), git HEAD, refs, stash, status and local config, the remote's
refs.  Each dangerous action (dangerous.jsonl) runs only under airlock; its checks say what must
still hold afterwards (home and outside intact, secrets in no output, remote unmoved, planted files
absent) and its refusal must be in the audit log.  Prints mismatches and failures with the audit
log lines that explain them, then the figures; exits 1 below the thresholds.
"""
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SECRETS = ("sk-corpus-canary-7f3a9c", "CORPUS-CANARY-SSH-KEY-91d2", "CORPUS-CANARY-AWS-SECRET-44b8")
SAME_MIN, ASKS_MAX = 98.0, 2.0
TIMEOUT = 60
GIT_ENV = {"GIT_AUTHOR_DATE": "2025-01-02T00:00:00Z", "GIT_COMMITTER_DATE": "2025-01-02T00:00:00Z",
           "GIT_CONFIG_NOSYSTEM": "1"}
DURATIONS = []
CRONTABS = ("/var/spool/cron/crontabs", "/var/spool/cron")


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return [json.loads(line) for line in f if line.strip()]


def subst(text, job):
    return (text.replace("@WS@", job + "/ws").replace("@HOME@", job + "/home")
            .replace("@OUT@", job + "/outside").replace("@REMOTE@", job + "/remote.git"))


def prepare(template, job):
    """A fresh copy of the fixture at JOB (origin pointed at JOB's own bare remote)."""
    if os.path.exists(job):
        shutil.rmtree(job)
    subprocess.run(["cp", "-a", template, job], check=True)
    subprocess.run(["git", "-c", "safe.directory=*", "-C", job + "/ws", "remote", "set-url", "origin", job + "/remote.git"],
                   check=True, env=env_for(job))


def env_for(job):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": job + "/home", "LC_ALL": "C",
           "LANG": "C", "TERM": "dumb", "USER": os.environ.get("USER", "root")}
    env.update(GIT_ENV)
    return env


# How each run is wrapped: a network namespace of its own, and as root also another user (nobody),
# as agents run unprivileged (root would write where no agent can, e.g. the system's site-packages).
WRAP = ["unshare", "-n", "--"]


def run(airlock, job, cmd, sandboxed):
    ws = job + "/ws"
    script = "cd %s && %s" % (ws, subst(cmd, job))
    argv = list(WRAP)
    if sandboxed:
        argv += [airlock, "run", "--headless", "--workspace", ws, "--log", job + "/audit.jsonl"]
        for k, v in GIT_ENV.items():
            argv += ["--env", "%s=%s" % (k, v)]
        argv += ["--"]
    argv += ["/bin/bash", "-c", script]
    start = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=ws, env=env_for(job), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        DURATIONS.append((time.monotonic() - start, cmd))
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode("utf-8", "replace"), "timeout"


def status_class(rc):
    if rc == 0:
        return "ok"
    if rc in (126, 127):
        return "not-run(%d)" % rc
    if rc == 124 or rc > 128 or rc < 0:
        return "killed(%d)" % rc
    return "failed"


def normalise(text, job):
    text = text.replace(job, "@JOB@")
    text = re.sub(r"\b\d+(\.\d+)?(s|ms| seconds?)\b", "N\\2", text)
    text = re.sub(r"(?m)^total \d+$", "total N", text)  # ls -l: blocks, not content
    text = re.sub(r"\b[A-Z][a-z]{2} +\d{1,2} +(\d\d:\d\d|\d{4})\b", "DATE", text)
    text = re.sub(r"\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?", "DATE", text)
    return text


def git(ws, *args):
    p = subprocess.run(["git", "-c", "safe.directory=*", "-C", ws, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
                            "GIT_CONFIG_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0"})
    return p.stdout.decode("utf-8", "replace")


def tree(top, skip_git=True):
    """{relative path: kind, mode, content hash} under TOP; caches by name only.  airlock's own
    state in a home (~/.local/state/airlock: what the launcher kept aside) is not the agent's."""
    out = {}
    if not os.path.isdir(top):
        return out
    for root, dirs, files in os.walk(top):
        rel = os.path.relpath(root, top)
        if rel == ".local/state/airlock" or rel.startswith(".local/state/airlock/"):
            dirs[:] = []
            continue
        if skip_git and (rel == ".git" or rel.startswith(".git/")):
            dirs[:] = []
            continue
        for name in sorted(dirs + files):
            path = os.path.join(root, name)
            key = os.path.normpath(os.path.join(rel, name))
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if os.path.islink(path):
                out[key] = "link " + os.readlink(path)
            elif os.path.isdir(path):
                out[key] = "dir %o" % (st.st_mode & 0o7777)
            elif "__pycache__" in key or ".pytest_cache" in key or ".mypy_cache" in key:
                out[key] = "cache"
            else:
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()[:16]
                out[key] = "file %o %s" % (st.st_mode & 0o7777, digest)
        if "venv" in rel.split(os.sep)[:1]:
            dirs[:] = []
    if os.path.isdir(os.path.join(top, ".local/state/airlock")):
        for key in (".local", ".local/state", ".local/state/airlock"):
            out.pop(key, None)
    return out


def snapshot(job):
    ws = job + "/ws"
    hooks = sorted(n for n in os.listdir(ws + "/.git/hooks") if not n.endswith(".sample")) \
        if os.path.isdir(ws + "/.git/hooks") else ["<no hooks dir>"]
    return {
        "tree": tree(ws),
        "git": {"HEAD": git(ws, "rev-parse", "HEAD").strip(),
                "branch": git(ws, "symbolic-ref", "-q", "HEAD").strip(),
                "refs": git(ws, "for-each-ref", "--format=%(refname) %(objectname)"),
                "stash": git(ws, "stash", "list", "--format=%H"),
                "status": git(ws, "status", "--porcelain", "--untracked-files=all"),
                "config": git(ws, "config", "--local", "--list"),
                "hooks": " ".join(hooks) if os.path.isdir(ws + "/.git") else "<no .git>"},
        "remote": git(job + "/remote.git", "for-each-ref", "--format=%(refname) %(objectname)"),
    }


def audit(job, launcher=False):
    events = []
    try:
        with open(job + "/audit.jsonl") as f:
            for line in f:
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return [e for e in events if launcher or e.get("source") != "launcher"]


def describe(e):
    what = e.get("command", "")
    if what:
        what = "exec " + os.path.basename(what) + " " + " ".join(e.get("args", []))
    elif "file" in e:
        what = "%s %s" % (e.get("action", "open"), e["file"])
    else:
        what = "connect " + e.get("network_dst", "?")
    asked = "asked, " if e.get("decided_by", "policy") != "policy" else ""
    return "%s (%s%s by %s)" % (what[:150], asked, e.get("decision"), e.get("rule", "default"))


def refusals(job):
    return [e for e in audit(job) if e.get("decision") != "allow"]


def compare(bare, boxed):
    diffs = []
    if bare["class"] != boxed["class"]:
        diffs.append("exit: bare %s (%d), airlock %s (%d)" % (bare["class"], bare["rc"], boxed["class"],
                                                               boxed["rc"]))
    if bare["stdout"] != boxed["stdout"]:
        a, b = bare["stdout"].splitlines(), boxed["stdout"].splitlines()
        first = next((i for i in range(max(len(a), len(b)))
                      if i >= len(a) or i >= len(b) or a[i] != b[i]), 0)
        diffs.append("stdout differs at line %d: bare %r, airlock %r" % (
            first + 1, a[first][:100] if first < len(a) else "<end>", b[first][:100] if first < len(b) else "<end>"))
    for k in sorted(set(bare["snap"]["tree"]) | set(boxed["snap"]["tree"])):
        x, y = bare["snap"]["tree"].get(k), boxed["snap"]["tree"].get(k)
        if x != y:
            diffs.append("tree %s: bare %s, airlock %s" % (k, x or "absent", y or "absent"))
            if len(diffs) > 8:
                break
    for k, v in bare["snap"]["git"].items():
        if boxed["snap"]["git"][k] != v:
            diffs.append("git %s: bare %r, airlock %r" % (k, v[:120], boxed["snap"]["git"][k][:120]))
    if bare["snap"]["remote"] != boxed["snap"]["remote"]:
        diffs.append("remote refs differ")
    return diffs


def benign_case(airlock, template, scratch, case):
    job = os.path.join(scratch, case["id"])
    res = {}
    for mode in ("bare", "airlock"):
        prepare(template, job)
        rc, out, err = run(airlock, job, case["cmd"], mode == "airlock")
        res[mode] = {"rc": rc, "class": status_class(rc), "stdout": normalise(out, job),
                     "stderr": normalise(err, job), "snap": snapshot(job)}
    events = audit(job)
    asks = [e for e in events if e.get("decided_by", "policy") != "policy"]
    diffs = compare(res["bare"], res["airlock"])
    lines = [describe(e) for e in events if e.get("decision") != "allow"]
    lines += ["launcher: kept aside %s (a runs-later file)" % e.get("file", "?")
              for e in audit(job, launcher=True) if e.get("event") == "kept_aside"]
    shutil.rmtree(job, ignore_errors=True)
    return {"id": case["id"], "cmd": case["cmd"], "diffs": diffs, "asks": len(asks), "log": lines,
            "needs": case.get("needs"),
            "stderr": res["airlock"]["stderr"][-600:] if diffs else ""}


def crontab_state():
    out = {}
    for d in CRONTABS:
        out.update({d + "/" + k: v for k, v in tree(d, skip_git=False).items()})
    return out


def dangerous_case(airlock, template, scratch, case):
    job = os.path.join(scratch, case["id"])
    prepare(template, job)
    before = {"home": tree(job + "/home"), "outside": tree(job + "/outside"), "snap": snapshot(job),
              "cron": crontab_state()}
    rc, out, err = run(airlock, job, case["cmd"], True)
    after = snapshot(job)
    failed = []
    for check in case["checks"]:
        if isinstance(check, dict):
            path = subst(check["absent"], job)
            if os.path.lexists(path):
                failed.append("%s exists on the host" % path.replace(job, "@JOB@"))
            continue
        if check == "home_intact" and tree(job + "/home") != before["home"]:
            failed.append("the home directory changed: " + changed(before["home"], tree(job + "/home")))
        elif check == "outside_intact" and tree(job + "/outside") != before["outside"]:
            failed.append("the directory outside the workspace changed: " +
                          changed(before["outside"], tree(job + "/outside")))
        elif check == "remote_unchanged" and after["remote"] != before["snap"]["remote"]:
            failed.append("the remote's refs moved")
        elif check == "ws_intact" and (after["git"]["HEAD"] != before["snap"]["git"]["HEAD"] or
                                       not os.path.exists(job + "/ws/calc/core.py")):
            failed.append("the workspace or its history is gone")
        elif check == "head_unchanged" and after["git"]["HEAD"] != before["snap"]["git"]["HEAD"]:
            failed.append("HEAD moved")
        elif check == "uncommitted_kept" and not uncommitted_kept(job):
            failed.append("the uncommitted change to calc/core.py is lost")
        elif check == "untracked_kept" and not os.path.exists(job + "/ws/reproduce_issue.py"):
            failed.append("untracked files were deleted")
        elif check == "config_unchanged" and after["git"]["config"].replace(job, "") != \
                before["snap"]["git"]["config"].replace(job, ""):
            failed.append(".git/config changed: %r" % after["git"]["config"][-200:])
        elif check == "crontab_unchanged" and crontab_state() != before["cron"]:
            failed.append("a crontab changed")
        elif check == "no_secret":
            for s in SECRETS:
                if s in out or s in err:
                    failed.append("a secret is in the output")
                    break
    for s in SECRETS:  # never anywhere new on the host
        hits = subprocess.run(["grep", "-rlF", "--exclude=.env", "--exclude=id_rsa", "--exclude=credentials",
                               "--exclude-dir=.git", s, job + "/ws", job + "/outside"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
        if hits.strip():
            failed.append("a secret was copied to %s" % hits.split()[0].replace(job, "@JOB@"))
    refused = refusals(job)
    # a runs-later file written in a session copy is kept aside at the end, said by the launcher
    kept = [e for e in audit(job, launcher=True) if e.get("event") == "kept_aside"]
    want = case.get("log_match", "")
    logged = [e for e in refused + kept if want in json.dumps(e) or want == "deny"]
    lines = [describe(e) for e in refused] + ["launcher: kept aside %s" % e.get("file", "?") for e in kept]
    shutil.rmtree(job, ignore_errors=True)
    return {"id": case["id"], "cmd": case["cmd"], "failed": failed, "logged": bool(logged), "log": lines,
            "needs": case.get("needs"), "rc": rc, "stderr": err[-400:]}


def changed(a, b):
    keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return ", ".join("%s (%s -> %s)" % (k, a.get(k, "absent"), b.get(k, "absent")) for k in keys[:4])


def uncommitted_kept(job):
    ws = job + "/ws"
    try:
        with open(ws + "/calc/core.py") as f:
            if "def sub(" in f.read():
                return True
    except OSError:
        pass
    return "def sub(" in git(ws, "stash", "show", "-p")


def as_user(scratch, airlock):
    """Sets WRAP: as root, runs go through setpriv as nobody (owning the scratch tree).  Returns
    the airlock to run (a copy nobody can execute when the build is out of its reach)."""
    if os.getuid() != 0:
        WRAP[:] = ["unshare", "--map-current-user", "-n", "--"]
        return airlock
    nogroup = subprocess.run(["id", "-gn", "nobody"], stdout=subprocess.PIPE).stdout.decode().strip()
    WRAP[:] = ["unshare", "-n", "--", "setpriv", "--reuid=nobody", "--regid=" + nogroup, "--clear-groups", "--"]
    probe = subprocess.run(WRAP[3:] + ["test", "-x", airlock], stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        os.makedirs(scratch + "/build", exist_ok=True)
        for name in ("airlock", "airlock-preload.so", "airlock-landlock"):
            shutil.copy(os.path.join(os.path.dirname(airlock), name), scratch + "/build/")
        airlock = scratch + "/build/airlock"
        print("# nobody cannot reach the build: using a copy in %s/build" % scratch)
    return airlock


def main():
    airlock, scratch = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    jobs, only = 2, set()
    args = sys.argv[3:]
    while args:
        a = args.pop(0)
        if a == "--jobs":
            jobs = int(args.pop(0))
        elif a == "--only":
            only.update(args)
            args = []
    benign, dangerous = load("benign.jsonl"), load("dangerous.jsonl")
    if only:
        benign = [c for c in benign if c["id"] in only]
        dangerous = [c for c in dangerous if c["id"] in only]
    skipped = [c for c in dangerous if c.get("requires") and not shutil.which(c["requires"])]
    for c in skipped:
        print("SKIP %s: %s is not installed here, so the action cannot run at all: %s" % (
            c["id"], c["requires"], c["cmd"][:100]))
    dangerous = [c for c in dangerous if c not in skipped]
    os.chmod(scratch, 0o755)
    airlock = as_user(scratch, airlock)
    os.makedirs(scratch + "/probe/home", exist_ok=True)
    if os.getuid() == 0:
        subprocess.run(["chown", "-R", "nobody:", scratch + "/probe"], check=True)
    probe = subprocess.run(WRAP + [airlock, "run", "--headless", "--workspace", scratch + "/probe", "--log",
                                   scratch + "/probe/audit.jsonl", "--", "/bin/true"], cwd=scratch + "/probe",
                           env=env_for(scratch + "/probe"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if probe.returncode != 0:
        print("SKIP corpus: airlock run cannot run here as %s (%s): %s" % (
            "nobody" if os.getuid() == 0 else "you", " ".join(WRAP[:-1]),
            probe.stdout.decode("utf-8", "replace").strip()[-300:]))
        sys.exit(0)
    template = os.path.join(scratch, "template")
    subprocess.run([sys.executable, os.path.join(HERE, "fixture.py"), os.path.join(HERE, "benign.jsonl"),
                    template], check=True)
    if os.getuid() == 0:
        subprocess.run(["chown", "-R", "nobody:", template], check=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        bres = list(pool.map(lambda c: benign_case(airlock, template, scratch, c), benign))
        dres = list(pool.map(lambda c: dangerous_case(airlock, template, scratch, c), dangerous))
    same = [r for r in bres if not r["diffs"]]
    pending_b = [r["id"] for r in bres if r["diffs"] and r.get("needs")]
    asks = sum(r["asks"] for r in bres)
    for r in bres:
        if r["diffs"]:
            tag = "PENDING(needs %s)" % r["needs"] if r.get("needs") else "MISMATCH"
            print("%s %s: %s" % (tag, r["id"], r["cmd"].splitlines()[0][:140]))
            for d in r["diffs"]:
                print("    " + d)
            for line in r["log"][:6]:
                print("    log: " + line)
            if not r["log"]:
                print("    log: nothing refused or asked; airlock's stderr: %r" % r["stderr"][-300:])
    harmless = logged = 0
    pending = []
    for r in dres:
        ok = not r["failed"]
        harmless += ok
        logged += bool(r["logged"]) if r["logged"] is not None else ok
        if ok and r["logged"] is not False:
            continue
        if r["needs"]:
            pending.append(r["id"])
            tag = "PENDING(needs %s)" % r["needs"]
        else:
            tag = "HARM" if r["failed"] else "UNLOGGED"
        print("%s %s: %s" % (tag, r["id"], r["cmd"][:140]))
        for f in r["failed"]:
            print("    " + f)
        for line in r["log"][:6]:
            print("    log: " + line)
        if not r["log"]:
            print("    log: nothing refused (exit %d; stderr %r)" % (r["rc"], r["stderr"][-200:]))
    n, e = len(bres), len(dres)
    ratio = 100.0 * len(same) / n if n else 100.0
    per100 = 100.0 * asks / n if n else 0.0
    print("corpus: slowest runs: " + "; ".join("%.1fs %s" % (t, c.splitlines()[0][:40])
                                              for t, c in sorted(DURATIONS, reverse=True)[:4]))
    print("corpus: same %d/%d (%.1f%%)" % (len(same), n, ratio))
    print("corpus: asks %.1f per 100" % per100)
    print("corpus: dangerous harmless %d/%d, logged %d/%d" % (harmless, e, logged, e))
    if pending_b or pending:
        print("corpus: PENDING, not counted as failures until they land: %d benign, %d dangerous: %s" % (
            len(pending_b), len(pending), " ".join(pending_b + pending)))
    with open(os.path.join(scratch, "figures.json"), "w") as f:
        json.dump({"same": len(same), "n": n, "ratio": ratio, "asks_per_100": per100,
                   "harmless": harmless, "logged": logged, "dangerous": e,
                   "pending": pending_b + pending}, f)
    ok_ratio = 100.0 * (len(same) + len(pending_b)) / n if n else 100.0
    unfixed = [r for r in dres if r["id"] not in pending and (r["failed"] or r["logged"] is False)]
    sys.exit(0 if ok_ratio >= SAME_MIN and per100 <= ASKS_MAX and not unfixed else 1)


if __name__ == "__main__":
    main()
