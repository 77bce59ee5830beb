#!/usr/bin/python3
"""fake_session.py — a fake airlock session: the launcher's side of the control protocol
(launcher/approvals/control.h) on a Unix socket, for testing the TUI without a sandbox.

  fake_session.py SOCKET RECORD [--cmd FIFO] [--keep] [--timeout S] [--no-events]
                  [--hold-answers]

Listens on SOCKET.  Each client gets a hello, a status and a few events (an allowed exec, a
denied write, a proxy connection with bytes, a launcher message).  Every line a client sends
is appended to RECORD as it came (flushed per line); "EOF" is appended when a client leaves.

Replies like the launcher's:
  {"type":"answer","id":N,"answer":A} for a waiting ask -> "answered" (decided_by human), the
      audit event of the decision and a new status; unknown ids are ignored; with
      --hold-answers, nothing (the "answered" command sends it);
  {"type":"quit"} -> {"type":"end","status":143}, then the socket is closed and this exits.

Commands, one per line, written to FIFO (made when missing) script the rest:
  ask ID WHAT...           an ask (who "python3 agent.py --task demo", pid 4242, rule
                           "policy.yaml:12", reason "pushing needs a human", 60 s)
  exec DECISION PROG ARG.. an exec event        connect DECISION HOST:PORT  a proxy event
  rule RULE DECISION PROG ARG...  an exec event decided by the rule RULE
  attached N               the status, saying N clients are attached
  write DECISION PATH      a file event         msg TEXT...                 a launcher event
  events N                 N numbered exec events ("exec /bin/echo line-K")
  answered ID DECISION BY  an "answered" sent unprompted (elsewhere / timeout)
  status                   the status again     raw TEXT                    TEXT and a newline
  long N                   a line of N bytes    end STATUS                  "end", close, exit
Exits when the client leaves (unless --keep), on "quit" or "end", or after --timeout
seconds (default 120).
"""
import json
import os
import selectors
import socket
import stat
import sys
import time

WHO = "python3 agent.py --task demo"


def now():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % (int(t * 1000) % 1000)


class Session:
    def __init__(self, args):
        self.sock_path, self.record_path = args[0], args[1]
        self.fifo = None
        self.keep = "--keep" in args
        self.events = "--no-events" not in args
        self.hold_answers = "--hold-answers" in args
        self.timeout = 120.0
        if "--cmd" in args:
            self.fifo = args[args.index("--cmd") + 1]
        if "--timeout" in args:
            self.timeout = float(args[args.index("--timeout") + 1])
        self.record = open(self.record_path, "a", buffering=1)
        self.client = None
        self.inbuf = b""
        self.pending = {}  # id -> what
        self.counts = {"allow": 0, "deny": 0, "asked": 0}
        self.up, self.down = 0, 0
        self.attached = 0
        self.nevent = 0

    # ---- sending
    def send(self, obj):
        self.send_raw(json.dumps(obj, separators=(",", ":")))

    def send_raw(self, text):
        if not self.client:
            return
        try:
            self.client.sendall(text.encode("utf-8", "surrogateescape") + b"\n")
        except OSError:
            self.drop_client()

    def event(self, **fields):
        self.nevent += 1
        ev = {"id": "ev%d" % self.nevent, "timestamp": now(), "session_id": "fake0123456789ab"}
        ev.update(fields)
        d = fields.get("decision")
        if d in self.counts:
            self.counts[d] += 1
        self.send({"type": "event", "event": ev})

    def status(self):
        self.send({"type": "status", "allow": self.counts["allow"], "deny": self.counts["deny"],
                   "asked": self.counts["asked"], "pending": len(self.pending),
                   "egress_up": self.up, "egress_down": self.down, "attached": self.attached})

    def greet(self):
        self.send({"type": "hello", "version": 1, "session": "fake0123456789ab", "pid": os.getpid(),
                   "agent": WHO, "log": "/tmp/fake-audit.jsonl", "ask_timeout": 60,
                   "headless": True, "started": now()})
        self.status()
        if self.events:
            self.event(source="launcher", message="session started: fake agent")
            self.event(source="shim", pid=4242, command="/usr/bin/git", args=["status"],
                       decision="allow", decided_by="policy", rule="policy.yaml:7")
            self.event(source="shim", pid=4243, file="/w/.env", action="write",
                       decision="deny", decided_by="policy", rule="policy.yaml:21",
                       reason="secrets stay put")
            self.up, self.down = 2048, 3 * 1024 * 1024
            self.event(source="proxy", network_dst="pypi.org:443", decision="allow",
                       decided_by="policy", rule="policy.yaml:30",
                       message="2048 bytes up, 3145728 down, 120 ms, via https")
            self.status()

    # ---- the client's lines
    def on_line(self, line):
        self.record.write(line.decode("utf-8", "replace") + "\n")
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        t = msg.get("type")
        if t == "attach":
            self.attached += 1
            self.status()
        elif t == "answer":
            i, ans = msg.get("id"), msg.get("answer")
            if self.hold_answers:
                return
            if i in self.pending and ans in ("allow", "deny", "allow-session", "deny-session"):
                what = self.pending.pop(i)
                dec = "allow" if ans.startswith("allow") else "deny"
                self.send({"type": "answered", "id": i, "decision": dec, "decided_by": "human"})
                parts = what.split()
                ev = dict(source="shim", pid=4242, decision=dec, decided_by="human",
                          rule="policy.yaml:12", reason="pushing needs a human",
                          response_time_ms=1500)
                if parts and parts[0] == "exec":
                    ev.update(command=parts[1] if len(parts) > 1 else "?", args=parts[2:])
                elif parts and parts[0] == "connect":
                    ev.update(network_dst=parts[1] if len(parts) > 1 else "?", source="proxy")
                else:
                    ev.update(file=parts[-1] if parts else "?", action=parts[0] if parts else "open")
                self.event(**ev)
                self.status()
        elif t == "quit":
            self.send({"type": "end", "status": 143})
            self.finish()

    # ---- commands from the FIFO
    def on_command(self, line):
        words = line.split()
        if not words:
            return
        c, rest = words[0], words[1:]
        if c == "ask":
            i = int(rest[0])
            what = " ".join(rest[1:]) or "exec git push origin main"
            self.pending[i] = what
            self.counts["asked"] += 1
            self.send({"type": "ask", "id": i, "pid": 4242, "who": WHO, "what": what,
                       "rule": "policy.yaml:12", "reason": "pushing needs a human",
                       "timeout_ms": 60000})
            self.status()
        elif c == "exec":
            self.event(source="shim", pid=4300, command=rest[1], args=rest[2:],
                       decision=rest[0], decided_by="policy", rule="policy.yaml:9")
            self.status()
        elif c == "rule":
            self.event(source="shim", pid=4300, command=rest[2], args=rest[3:],
                       decision=rest[1], decided_by="policy", rule=rest[0])
        elif c == "attached":
            self.attached = int(rest[0])
            self.status()
        elif c == "connect":
            self.event(source="proxy", network_dst=rest[1], decision=rest[0],
                       decided_by="policy", rule="policy.yaml:31")
            self.status()
        elif c == "write":
            self.event(source="shim", pid=4301, file=rest[1], action="write",
                       decision=rest[0], decided_by="policy", rule="policy.yaml:22")
            self.status()
        elif c == "msg":
            self.event(source="launcher", message=line.split(None, 1)[1] if rest else "")
        elif c == "events":
            for k in range(int(rest[0])):
                self.event(source="shim", pid=5000 + k, command="/bin/echo",
                           args=["line-%d" % k], decision="allow", decided_by="policy",
                           rule="policy.yaml:3")
            self.status()
        elif c == "answered":
            i = int(rest[0])
            self.pending.pop(i, None)
            self.send({"type": "answered", "id": i, "decision": rest[1], "decided_by": rest[2]})
            self.status()
        elif c == "status":
            self.status()
        elif c == "raw":
            self.send_raw(line.split(None, 1)[1] if rest else "")
        elif c == "long":
            self.send_raw("x" * int(rest[0]))
        elif c == "end":
            self.send({"type": "end", "status": int(rest[0]) if rest else 0})
            self.finish()

    # ---- plumbing
    def drop_client(self):
        if self.client:
            try:
                self.sel.unregister(self.client)
            except (KeyError, ValueError):
                pass
            self.client.close()
            self.client = None
            self.record.write("EOF\n")
            if not self.keep:
                self.finish()

    def finish(self):
        if self.client:
            try:
                self.client.shutdown(socket.SHUT_WR)
                # let the TUI read the end before the close
                self.client.settimeout(2)
                while self.client.recv(4096):
                    pass
            except OSError:
                pass
            self.client.close()
            self.client = None
        try:
            os.unlink(self.sock_path)
        except OSError:
            pass
        sys.exit(0)

    def run(self):
        self.sel = selectors.DefaultSelector()
        try:
            os.unlink(self.sock_path)
        except OSError:
            pass
        lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lst.bind(self.sock_path)
        lst.listen(4)
        self.sel.register(lst, selectors.EVENT_READ, "listen")
        fifo_fd = None
        if self.fifo:
            if not (os.path.exists(self.fifo) and stat.S_ISFIFO(os.stat(self.fifo).st_mode)):
                os.mkfifo(self.fifo, 0o600)
            fifo_fd = os.open(self.fifo, os.O_RDWR | os.O_NONBLOCK)
            self.sel.register(fifo_fd, selectors.EVENT_READ, "fifo")
        fifo_buf = b""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for key, _ in self.sel.select(timeout=0.5):
                if key.data == "listen":
                    c, _ = lst.accept()
                    if self.client:  # one client at a time; a second one is refused
                        c.close()
                        continue
                    self.client = c
                    self.inbuf = b""
                    self.sel.register(c, selectors.EVENT_READ, "client")
                    self.greet()
                elif key.data == "client":
                    try:
                        data = self.client.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        self.drop_client()
                        continue
                    self.inbuf += data
                    while b"\n" in self.inbuf and self.client:
                        line, self.inbuf = self.inbuf.split(b"\n", 1)
                        self.on_line(line)
                elif key.data == "fifo":
                    fifo_buf += os.read(fifo_fd, 65536)
                    while b"\n" in fifo_buf:
                        line, fifo_buf = fifo_buf.split(b"\n", 1)
                        self.on_command(line.decode("utf-8", "surrogateescape"))
        self.record.write("TIMEOUT\n")
        self.finish()


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    Session(sys.argv[1:]).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
