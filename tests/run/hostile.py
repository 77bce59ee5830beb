#!/usr/bin/python3
"""hostile.py - hostile peers of a running `airlock run`, for tests/run/hostile.sh.

Outside the sandbox (the control socket, launcher/approvals/control.h; the session's socket is
BASE/<session id>.control, the id read from the first line of its audit LOG):

  hostile.py bad BASE LOG
      connects, prints its own pid, reads the hello, sends two malformed lines and closes
      at once (without reading anything more).
  hostile.py answer BASE LOG MODE OUT [READY [GATE]]
      attaches (READY is created once the launcher says it is attached), then
        once-allow-close  answers the first ask allow and closes at once;
        parity            answers every ask until "end": allow when the number at the end of
                          the file name is even, deny when odd (an ask whose subject has no
                          such number is denied and counted as unexpected);
        hold              reads nothing until GATE exists (a client that does not keep up),
                          then reads everything and answers allow the asks whose subject
                          starts with "write ", leaves the others waiting, until "end".
      OUT gets one JSON summary line: what came, what was answered, whether the
      connection was dropped before "end".
  hostile.py sample PID OUT STOP
      every 20 ms until STOP exists or PID is gone: VmRSS and open fds of PID; OUT gets
      {"peak_rss_kb", "peak_fds", "samples"} (rewritten at each new peak).
  hostile.py cpu PID SECONDS
      prints the CPU PID used over SECONDS (utime + stime), in percent of one CPU.

Inside the sandbox (the channel, core/channel.h; $AIRLOCK_DIR/channel):

  hostile.py bomb ASKS CONNS ARG_BYTES STATUS STOP
      opens CONNS connections (fewer when its fd limit cannot be raised that far), keeps
      those the launcher did not close, sends ASKS exec asks round-robin on them, each with
      an argument of ARG_BYTES bytes, and collects the answers; STATUS gets a JSON summary
      once every ask is answered but the 16 that may wait (APPROVE_MAX_ASKS_PER_PROCESS),
      or after 15 s; it then holds its connections until STOP exists.
  hostile.py hold CONNS STATUS STOP
      opens and holds CONNS connections; after 1 s STATUS gets how many the launcher
      accepted and kept, and how many it closed; holds until STOP exists.
  hostile.py events N ARG_BYTES
      sends N exec events (what a shim reports after the fact), each with an argument of
      ARG_BYTES bytes, on one connection, as fast as the launcher takes them; prints N.
  hostile.py garbage SECONDS
      sends malformed datagrams on one connection as fast as it can for SECONDS; prints
      how many it sent.
"""
import json
import os
import re
import resource
import selectors
import socket
import struct
import sys
import time

# ---- the channel (core/channel.h) -------------------------------------------------------

MAGIC_VERSION = (0xA1 << 8) | 1
EVENT, ASK, ANSWER = 1, 2, 3
SOURCE_EXEC = 1
ACTION_EXEC = 0x40
POLICY_ALLOW, POLICY_ASK, POLICY_DENY = 0, 1, 2
HEADER = struct.Struct("<HBBIIBBBBii")


def cstring(b):
    return struct.pack("<I", len(b)) + b + b"\x00"


def exec_msg(kind, mid, program, args):
    body = cstring(program) + struct.pack("<II", len(args), len(args)) + b"".join(cstring(a) for a in args)
    return HEADER.pack(MAGIC_VERSION, kind, 0, HEADER.size + len(body), mid, SOURCE_EXEC, ACTION_EXEC,
                       POLICY_ASK if kind == ASK else POLICY_ALLOW, 0, -1, 0) + body


def exec_ask(mid, program, args):
    return exec_msg(ASK, mid, program, args)


def channel_path():
    return os.path.join(os.environ["AIRLOCK_DIR"], "channel")


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def open_conns(n, limit):
    """Up to n connections to the channel (fewer when out of descriptors)."""
    conns = []
    for _ in range(n):
        if len(conns) >= limit:
            break
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.connect(channel_path())
        except OSError:
            s.close()
            break
        conns.append(s)
    return conns


def closed_by_peer(s):
    """True when the launcher closed this connection (nothing else is ever sent on it yet)."""
    try:
        data = s.recv(64, socket.MSG_DONTWAIT | socket.MSG_PEEK)
    except BlockingIOError:
        return False
    except OSError:
        return True
    return data == b""


def split_live(conns):
    live, gone = [], []
    for s in conns:
        (gone if closed_by_peer(s) else live).append(s)
    for s in gone:
        s.close()
    return live, len(gone)


def write_json(path, obj):
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.rename(path + ".tmp", path)


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.05)


def cmd_bomb(asks, nconns, arg_bytes, status, stop):
    limit = raise_nofile(nconns + 64) - 32
    conns = open_conns(nconns, limit)
    opened = len(conns)
    time.sleep(0.5)  # the launcher accepts them, and closes those past its bounds
    live, refused = split_live(conns)
    sel = selectors.DefaultSelector()
    for s in live:
        # a send that cannot go out in 10 s fails (EAGAIN); no Python timeout: with one, CPython
        # polls before every recv, MSG_DONTWAIT or not
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 10, 0))
        sel.register(s, selectors.EVENT_READ)
    sent_at, got = {}, {}
    decisions = {"allow": 0, "deny": 0, "other": 0}
    send_errors = 0
    program = b"/usr/bin/bomb-tool"

    def drain(timeout):
        for key, _ in sel.select(timeout):
            s = key.fileobj
            while True:
                try:
                    d = s.recv(65536, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                except OSError:
                    d = b""
                if not d:
                    sel.unregister(s)
                    break
                if len(d) < HEADER.size:
                    continue
                f = HEADER.unpack_from(d)
                if f[1] != ANSWER or f[4] not in sent_at or f[4] in got:
                    continue
                got[f[4]] = time.monotonic()
                decisions["allow" if f[7] == POLICY_ALLOW else "deny" if f[7] == POLICY_DENY else "other"] += 1

    t0 = time.monotonic()
    for i in range(asks):
        if not live:
            break
        mid = i + 1
        arg = (b"%06d-" % mid) + b"A" * (arg_bytes - 7)
        msg = exec_ask(mid, program, [b"bomb-tool", arg])
        s = live[i % len(live)]
        try:
            s.send(msg)
            sent_at[mid] = time.monotonic()
        except OSError:
            send_errors += 1
        drain(0)
    t_sent = time.monotonic()
    # every ask is answered at once but those the launcher lets wait (APPROVE_MAX_ASKS_PER_PROCESS)
    while time.monotonic() - t_sent < 15 and len(sent_at) - len(got) > 16:
        drain(0.1)
    drain(0.3)
    lat = sorted(got[k] - sent_at[k] for k in got)
    write_json(status, {
        "opened": opened, "refused_conns": refused, "live_conns": len(live), "sent": len(sent_at),
        "send_errors": send_errors, "answered": len(got), "waiting": len(sent_at) - len(got),
        "allow": decisions["allow"], "deny": decisions["deny"], "other": decisions["other"],
        "send_s": round(t_sent - t0, 3),
        "answer_max_ms": round(lat[-1] * 1000) if lat else -1,
        "answer_p99_ms": round(lat[int(len(lat) * 0.99)] * 1000) if lat else -1,
        "all_answered_after_last_send_ms": round((max(got.values()) - t_sent) * 1000) if got else -1,
    })
    wait_for(stop)
    return 0


def cmd_hold(nconns, status, stop):
    limit = raise_nofile(nconns + 64) - 32
    conns = open_conns(nconns, limit)
    opened = len(conns)
    time.sleep(1.0)
    live, closed = split_live(conns)
    write_json(status, {"opened": opened, "kept": len(live), "closed": closed})
    wait_for(stop)
    return 0


def cmd_events(n, arg_bytes):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(channel_path())
    for i in range(n):
        arg = (b"%06d-" % (i + 1)) + b"E" * (arg_bytes - 7)
        s.send(exec_msg(EVENT, i + 1, b"/usr/bin/cc", [b"cc", arg]))
    s.close()
    print(n)
    return 0


def cmd_garbage(seconds):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(channel_path())
    junk = [
        b"\xff\xff garbage, not this protocol",  # another magic
        b"\x01",  # shorter than the version field
        struct.pack("<H", MAGIC_VERSION) + b"\x02\x00\xff\xff\xff\xff",  # shorter than the header
        HEADER.pack(MAGIC_VERSION, ASK, 0, 999, 1, SOURCE_EXEC, ACTION_EXEC, 1, 0, -1, 0),  # bad length
    ]
    n = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for j in junk:
            s.send(j)
        n += len(junk)
    s.close()
    print(n)
    return 0


# ---- the control socket (launcher/approvals/control.h) ---------------------------------------------------

def session_socket(base, log, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open(log) as f:
                first = f.readline()
            sid = json.loads(first)["session_id"]
            path = os.path.join(base, sid + ".control")
            if os.path.exists(path):
                return path
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    raise SystemExit("no control socket for the session of %s in %s" % (log, base))


def ctl_connect(base, log, timeout=20):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(session_socket(base, log, timeout))
    return s


def cmd_bad(base, log):
    s = ctl_connect(base, log, 5)
    print(os.getpid(), flush=True)
    # the hello first: the launcher has then sent all it sends a new client, and the first thing
    # it sends after our lines (the log event of the first one) finds us gone
    f = s.makefile("rb")
    f.readline()
    s.sendall(b"this is not json\n" + json.dumps({"type": "bogus"}).encode() + b"\n")
    s.close()
    return 0


NUM = re.compile(r"-(\d+)$")


def cmd_answer(base, log, mode, out, ready=None, gate=None):
    s = ctl_connect(base, log)
    s.settimeout(60)
    buf = b""
    summary = {"asks": 0, "answered": {}, "ignored": 0, "unexpected": 0, "skipped": 0,
               "events": 0, "end": None, "dropped": False, "cut_asks": 0, "max_line": 0}

    def send(obj):
        s.sendall((json.dumps(obj) + "\n").encode())

    def lines():
        nonlocal buf
        while True:
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                summary["max_line"] = max(summary["max_line"], len(line))
                yield json.loads(line)
            try:
                chunk = s.recv(1 << 20)
            except (socket.timeout, ConnectionResetError):
                chunk = b""
            if not chunk:
                return
            buf += chunk

    send({"type": "attach"})
    it = lines()
    for m in it:  # the hello, backlog, status...: until the launcher counts us attached
        if m.get("type") == "status" and m.get("attached", 0) >= 1:
            break
    if ready:
        open(ready, "w").close()
    if gate:
        wait_for(gate)  # meanwhile the launcher queues what we do not read
    answered = summary["answered"]
    for m in it:
        t = m.get("type")
        if t == "end":
            summary["end"] = m.get("status")
            break
        if t == "skipped":
            summary["skipped"] += m.get("events", 0)
        elif t == "event":
            summary["events"] += 1
        if t != "ask":
            continue
        summary["asks"] += 1
        summary["cut_asks"] += bool(m.get("cut"))
        what = m.get("what", "")
        if mode == "once-allow-close":
            send({"type": "answer", "id": m["id"], "answer": "allow"})
            answered[what] = "allow"
            s.close()
            break
        if mode == "hold":
            if what.startswith("write "):
                send({"type": "answer", "id": m["id"], "answer": "allow"})
                answered[what] = "allow"
            else:
                summary["ignored"] += 1
            continue
        num = NUM.search(what)
        if not num:
            summary["unexpected"] += 1
            a = "deny"
        else:
            a = "allow" if int(num.group(1)) % 2 == 0 else "deny"
        send({"type": "answer", "id": m["id"], "answer": a})
        if what in answered:
            summary["unexpected"] += 1
        answered[what] = a
    else:
        summary["dropped"] = mode != "once-allow-close"
    write_json(out, summary)
    return 0


# ---- measuring the launcher -----------------------------------------------------------------

def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cmd_sample(pid, out, stop):
    peak = {"peak_rss_kb": 0, "peak_fds": 0, "samples": 0}
    while not os.path.exists(stop):
        try:
            r = rss_kb(pid)
            n = len(os.listdir("/proc/%d/fd" % pid))
        except (OSError, ValueError):
            break
        peak["samples"] += 1
        if r > peak["peak_rss_kb"] or n > peak["peak_fds"]:
            peak["peak_rss_kb"] = max(peak["peak_rss_kb"], r)
            peak["peak_fds"] = max(peak["peak_fds"], n)
            write_json(out, peak)
        time.sleep(0.02)
    write_json(out, peak)
    return 0


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat


def cmd_cpu(pid, seconds):
    hz = os.sysconf("SC_CLK_TCK")
    a, t0 = cpu_ticks(pid), time.monotonic()
    time.sleep(seconds)
    b, t1 = cpu_ticks(pid), time.monotonic()
    print(round(100.0 * (b - a) / hz / (t1 - t0), 1))
    return 0


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "bomb":
        return cmd_bomb(int(a[0]), int(a[1]), int(a[2]), a[3], a[4])
    if cmd == "hold":
        return cmd_hold(int(a[0]), a[1], a[2])
    if cmd == "events":
        return cmd_events(int(a[0]), int(a[1]))
    if cmd == "garbage":
        return cmd_garbage(float(a[0]))
    if cmd == "bad":
        return cmd_bad(a[0], a[1])
    if cmd == "answer":
        return cmd_answer(*a)
    if cmd == "sample":
        return cmd_sample(int(a[0]), a[1], a[2])
    if cmd == "cpu":
        return cmd_cpu(int(a[0]), float(a[1]))
    raise SystemExit("hostile.py: unknown command %r" % cmd)


if __name__ == "__main__":
    sys.exit(main())
