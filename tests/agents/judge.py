#!/usr/bin/python3
"""judge.py — the steps of a scripted agent session judged from the mock's report and the audit log.

  judge.py --script SCRIPT --out DIR [--log LOG] [--canaries "A B"] [--prefix P] [--legit-only]
           [--ws DIR]

Prints one line per step, "PASS\\tDESC" or "FAIL\\tDESC\\tWHY" (tests/agents/lib.sh turns them
into TAP), then one for the canaries.  A legit step passes when the agent ran it and its result
is no error (unless "error_ok") and holds "expect".  A hostile step passes when LOG has a line
matching one of its "audit" alternatives (a list of tests/run/logq.py conditions) whose decision
is deny or ask and that names a rule (or the policy's default, in its reason), or that is the launcher's kept_aside event (a file the
session made kept from the host); with "absent" and no "audit", when its result lacks that text.
What it did to the host the calling test checks.  The
canary line fails when any canary shows in a request the mock received (DIR/requests.jsonl).
With --legit-only the hostile steps are left out (a bare run plays only the legit ones).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import logq  # noqa: E402  (tests/run/logq.py: the condition syntax)


# The launcher's events that say a file the agent made or changed was kept from the host (a
# session copy of a path that runs later, not applied back).
STOPPED_EVENTS = ("kept_aside",)


def short(text, n=240):
    text = "" if text is None else str(text)
    text = text.replace("\n", " | ")
    # one line, and no backslash: the TAP lines are printed with sh's echo, which reads escapes
    text = "".join("?" if ord(c) < 0x20 or c == "\\" else c for c in text)
    return text if len(text) <= n else text[:n] + "..."


def log_lines(path):
    if not path:
        return []
    return [o for _l, o in logq.lines(path) if isinstance(o, dict)]


def hostile_verdict(step, rep, lines):
    """Why the hostile STEP is not shown stopped in LINES, or None when it is.  A step with
    "absent" and no "audit" is one nothing logs (a secret kept out of the agent's reach): it
    passes when the agent ran it and its result lacks that text."""
    if "audit" not in step:
        if not rep.get("answered"):
            return "no tool_result came back", None
        if step["absent"] in (rep.get("result") or ""):
            return "the result holds %r: %s" % (step["absent"], short(rep.get("result"))), None
        return None, {"decision": "kept out", "rule": "the result lacks %r" % step["absent"]}
    alts = step.get("audit") or []
    for conds in alts:
        c = logq.parse_conds(conds)
        for o in lines:
            if not logq.matches(o, c):
                continue
            # a rule, or the policy's default for its kind (then the reason says so)
            if o.get("decision") in ("deny", "ask") and (o.get("rule") or o.get("reason")):
                return None, o
            if o.get("event") in STOPPED_EVENTS:
                return None, {"decision": o["event"], "rule": "the launcher"}
    result = "never run" if not rep.get("served") else short(rep.get("result"))
    return ("no deny/ask log line with a rule matching %s; the tool said: %s"
            % (" or ".join(" ".join(a) for a in alts), result)), None


def legit_verdict(step, rep):
    if not rep.get("served"):
        return "never reached: the session ended before this step"
    if not rep.get("answered"):
        return "no tool_result came back (the agent stopped or crashed)"
    res = rep.get("result") or ""
    if rep.get("is_error") and not step.get("error_ok"):
        return "the tool failed: " + short(res)
    exp = step.get("expect")
    if exp and exp not in res:
        return "result lacks %r: %s" % (exp, short(res))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--log")
    ap.add_argument("--canaries", default="")
    ap.add_argument("--prefix", default="")
    ap.add_argument("--legit-only", action="store_true")
    ap.add_argument("--ws", help="the workspace, shown as . in the descriptions")
    a = ap.parse_args()
    with open(a.script, encoding="utf-8") as f:
        steps = json.load(f)["steps"]
    try:
        with open(os.path.join(a.out, "report.json"), encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print("FAIL\t%sthe mock's report\tunreadable: %s" % (a.prefix, e))
        return 0
    by_id = {s["id"]: s for s in report.get("steps", [])}
    lines = log_lines(a.log)
    for s in steps:
        kind = s.get("kind", "legit")
        if a.legit_only and kind != "legit":
            continue
        rep = by_id.get(s["id"], {})
        desc = "%s%s %s: %s %s" % (a.prefix, kind, s["id"], s["tool"],
                                   short(s["input"].get("command") or s["input"].get("file_path")
                                         or s["input"].get("pattern"), 70))
        if a.ws:
            desc = desc.replace(a.ws + "/", "./")
        if kind == "legit":
            why = legit_verdict(s, rep)
        else:
            why, line = hostile_verdict(s, rep, lines)
            if why is None:
                desc += " [%s by %s]" % (line.get("decision"), line.get("rule"))
        print("PASS\t%s" % desc if why is None else "FAIL\t%s\t%s" % (desc, why))
    canaries = [c for c in a.canaries.split() if c]
    seen = []
    try:
        with open(os.path.join(a.out, "requests.jsonl"), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        text = ""
    for c in canaries:
        if c in text:
            seen.append(c)
    nreq = text.count("\n")
    if not canaries:
        print("SKIP\t%sno canary reached the model\tno canaries given" % a.prefix)
    elif seen:
        print("FAIL\t%sno canary reached the model (%d requests)\tseen: %s"
              % (a.prefix, nreq, " ".join(seen)))
    else:
        print("PASS\t%sno canary reached the model (%d requests)" % (a.prefix, nreq))
    return 0


if __name__ == "__main__":
    sys.exit(main())
