#!/usr/bin/python3
"""logq.py — questions about an airlock audit log (JSON Lines) for tests/run/run.sh.

  logq.py LOG find  [--wait S] COND...   print the first line matching every COND; exit 1 if none
  logq.py LOG count COND...              print how many lines match every COND
  logq.py LOG valid                      every line is a JSON object with id, timestamp, session_id,
                                         source and a decision (the launcher's lifecycle lines: a
                                         message instead); exit 1 (with the reason) otherwise
  logq.py LOG asks DIR N M DECISION BY   the N x M ask files DIR/f-n-m each have exactly one line,
                                         with that decision and decided_by; exit 1 with a summary
COND: KEY=VALUE (the field, rendered as JSON without quotes for strings, equals VALUE),
      KEY~VALUE (contains VALUE), KEY$VALUE (ends with VALUE), !KEY (the field is absent).
"""
import json
import sys
import time


def render(v):
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


def parse_conds(args):
    conds = []
    for a in args:
        if a.startswith("!"):
            conds.append((a[1:], "!", None))
            continue
        idx = [p for p in (a.find("="), a.find("~"), a.find("$")) if p >= 0]
        if not idx:
            raise SystemExit("logq: bad condition %r" % a)
        i = min(idx)
        conds.append((a[:i], a[i], a[i + 1:]))
    return conds


def lines(log):
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    o = json.loads(line)
                except ValueError:
                    yield line, None
                    continue
                yield line, o
    except FileNotFoundError:
        return


def matches(o, conds):
    if not isinstance(o, dict):
        return False
    for k, op, v in conds:
        if op == "!":
            if k in o:
                return False
            continue
        if k not in o:
            return False
        r = render(o[k])
        if op == "=" and r != v:
            return False
        if op == "~" and v not in r:
            return False
        if op == "$" and not r.endswith(v):
            return False
    return True


def main():
    log, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if mode == "find":
        wait = 0.0
        if args[:1] == ["--wait"]:
            wait, args = float(args[1]), args[2:]
        conds = parse_conds(args)
        deadline = time.time() + wait
        while True:
            for line, o in lines(log):
                if matches(o, conds):
                    print(line)
                    return 0
            if time.time() >= deadline:
                return 1
            time.sleep(0.05)
    if mode == "count":
        conds = parse_conds(args)
        print(sum(1 for _, o in lines(log) if matches(o, conds)))
        return 0
    if mode == "valid":
        n = 0
        for line, o in lines(log):
            n += 1
            if not isinstance(o, dict):
                print("not a JSON object: %s" % line[:200])
                return 1
            # a decision on every event but the launcher's own lifecycle lines (which say what happened)
            need = ("id", "timestamp", "session_id", "source")
            need += ("message",) if o.get("source") == "launcher" and "decision" not in o else ("decision",)
            for k in need:
                if k not in o:
                    print("no %s in: %s" % (k, line[:200]))
                    return 1
        if n == 0:
            print("empty log")
            return 1
        return 0
    if mode == "asks":
        d, n, m, decision, by = args[0].rstrip("/"), int(args[1]), int(args[2]), args[3], args[4]
        want = {"%s/f-%d-%d" % (d, i, j): [] for i in range(1, n + 1) for j in range(1, m + 1)}
        for _, o in lines(log):
            if isinstance(o, dict) and o.get("file") in want:
                want[o["file"]].append(o)
        bad = []
        for name, evs in sorted(want.items()):
            if len(evs) != 1:
                bad.append("%s: %d lines" % (name, len(evs)))
            elif evs[0].get("decision") != decision or evs[0].get("decided_by") != by:
                bad.append("%s: decision %s decided_by %s" % (name, evs[0].get("decision"),
                                                              evs[0].get("decided_by")))
        if bad:
            print("%d of %d asks wrong; first: %s" % (len(bad), len(want), "; ".join(bad[:5])))
            return 1
        return 0
    raise SystemExit("logq: unknown mode %r" % mode)


if __name__ == "__main__":
    sys.exit(main())
