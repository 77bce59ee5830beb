#!/usr/bin/python3
"""ctlclient.py - a scripted client of a session's control socket (launcher/approvals/control.h).

Usage: ctlclient.py SOCKDIR ACTIONS OUTFILE [TIMEOUT_S]

Waits for a control socket (SOCKDIR/<16 hex>.control) to appear, connects, and
performs ACTIONS (comma-separated) in order:
  attach          send {"type":"attach"}
  ask:ANSWER      wait for the next ask, answer it (allow, deny, allow-session, deny-session)
  ask:close       wait for the next ask, then close the connection (detach)
  ask:quit        wait for the next ask, then send {"type":"quit"}
  quit            send {"type":"quit"} now
  bad             send a line that is not JSON, and one of an unknown type
  huge            send CONTROL_MAX_LINE bytes without a newline (the launcher drops us)
  hello           read the hello and close
Then it reads until "end" or end of file.  Every message received goes to
OUTFILE, one JSON object per line.  Exit 0, or 1 with a reason on stderr
(no socket, timeout, a line that is not JSON).
"""
import glob
import json
import os
import socket
import sys
import time


def main():
    sockdir, actions, outfile = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
    timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 20
    deadline = time.time() + timeout
    # the newest socket that answers: one a killed session left behind refuses (ECONNREFUSED)
    s = None
    while s is None and time.time() < deadline:
        found = []
        for path in glob.glob(os.path.join(sockdir, "*.control")):
            try:
                found.append((os.path.getmtime(path), path))
            except OSError:
                pass  # gone since the listing: its session ended
        for _, path in sorted(found, reverse=True):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                c.connect(path)
                s = c
                break
            except OSError:
                c.close()
        if s is None:
            time.sleep(0.05)
    if s is None:
        print("no control socket answers in %s" % sockdir, file=sys.stderr)
        return 1
    s.settimeout(max(0.1, deadline - time.time()))
    out = open(outfile, "w")
    buf = b""
    closed = False

    def next_msg():
        nonlocal buf
        while b"\n" not in buf:
            try:
                chunk = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                return None
            if not chunk:
                return None
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        m = json.loads(line)
        out.write(json.dumps(m) + "\n")
        out.flush()
        return m

    def send(obj):
        s.sendall((json.dumps(obj) + "\n").encode())

    def wait_type(t):
        while True:
            m = next_msg()
            if m is None or m.get("type") == t:
                return m

    for a in actions:
        if a == "attach":
            send({"type": "attach"})
        elif a == "hello":
            wait_type("hello")
            closed = True
            break
        elif a == "quit":
            send({"type": "quit"})
        elif a == "bad":
            s.sendall(b"this is not json\n")
            send({"type": "bogus"})
        elif a == "huge":
            try:
                s.sendall(b"x" * 65536)
            except OSError:
                pass
        elif a.startswith("ask:"):
            m = wait_type("ask")
            if m is None:
                print("no ask came", file=sys.stderr)
                return 1
            what = a[4:]
            if what == "close":
                closed = True
                break
            if what == "quit":
                send({"type": "quit"})
            else:
                send({"type": "answer", "id": m["id"], "answer": what})
        else:
            print("unknown action " + a, file=sys.stderr)
            return 2
    if not closed:
        wait_type("end")
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
