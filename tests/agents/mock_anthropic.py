#!/usr/bin/python3
"""mock_anthropic.py — a mock Anthropic Messages API that plays a scripted session to Claude Code.

  mock_anthropic.py --listen ADDR:PORT --script SCRIPT --out DIR

Python 3 standard library only.  Serves until SIGTERM; writes DIR/ready once listening.

POST /v1/messages whose `tools` list names the next step's tool is the agent's main loop: the
answer (SSE when the request says stream:true, else one JSON message) is the next step of SCRIPT
as a tool_use block, its id "toolu_mock_N" (N the step's index); the tool_result the agent sends
back for it is recorded.  Which step is next is read from the conversation itself (how many of
our tool_use blocks its assistant turns hold), so a retried request gets the same step again.
After the last step, the answer is the script's "final" text and end_turn.  Any other request
(title or summary with a small model, a quota check, count_tokens, GETs) is logged and answered
plainly.  Every request goes to DIR/requests.jsonl; DIR/report.json says, per step, the tool,
its input, the result and is_error (see tests/agents/lib.sh for both formats).
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_serve import serve  # noqa: E402  (tests/agents/mock_serve.py)

TOOL_ID = "toolu_mock_%d"
MODEL = "claude-mock-1"


class State:
    """The script, the results seen so far, and the files written."""

    def __init__(self, script, out):
        self.steps = script["steps"]
        self.final = script.get("final", "Done.")
        self.out = out
        self.lock = threading.Lock()
        self.results = {}
        self.errors = []
        self.done = False
        self.served = set()
        self.requests = open(os.path.join(out, "requests.jsonl"), "a", encoding="utf-8")

    def log_request(self, method, path, body):
        line = json.dumps({"method": method, "path": path,
                           "body": body.decode("utf-8", "replace")})
        with self.lock:
            self.requests.write(line + "\n")
            self.requests.flush()

    def write_report(self):
        steps = []
        for i, s in enumerate(self.steps):
            r = self.results.get(i)
            steps.append({"id": s.get("id", str(i)), "kind": s.get("kind", "legit"),
                          "tool": s["tool"], "input": s["input"],
                          "served": i in self.served,
                          "answered": r is not None,
                          "result": r[0] if r else None,
                          "is_error": r[1] if r else None})
        rep = {"steps": steps, "done": self.done, "errors": self.errors}
        tmp = os.path.join(self.out, "report.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(rep, f, indent=1)
        os.replace(tmp, os.path.join(self.out, "report.json"))


def result_text(block):
    """A tool_result block's content as text."""
    c = block.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(x.get("text", "") if isinstance(x, dict) else str(x) for x in c)
    return "" if c is None else json.dumps(c)


def is_main_loop(req, state):
    """Whether REQ is the agent's main loop: its tools name the script's tools."""
    tools = {t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)}
    if not tools:
        return False
    wanted = {s["tool"] for s in state.steps}
    return bool(tools & wanted)


def read_conversation(req, state):
    """Records the results in REQ's messages; returns how many of our steps it already holds."""
    asked = 0
    for m in req.get("messages") or []:
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            bid = b.get("id") if b.get("type") == "tool_use" else b.get("tool_use_id")
            if not isinstance(bid, str) or not bid.startswith("toolu_mock_"):
                continue
            try:
                n = int(bid[len("toolu_mock_"):])
            except ValueError:
                continue
            if b.get("type") == "tool_use":
                asked = max(asked, n + 1)
            elif b.get("type") == "tool_result":
                state.results[n] = (result_text(b), bool(b.get("is_error", False)))
    return asked


def sse(events):
    out = []
    for name, data in events:
        out.append("event: %s\ndata: %s\n\n" % (name, json.dumps(data)))
    return "".join(out).encode()


def message_events(msg_id, blocks, stop_reason):
    """The SSE events of one assistant message made of BLOCKS (text or tool_use)."""
    ev = [("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": MODEL, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "tool_use", "id": b["id"],
                                                                 "name": b["name"], "input": {}}}))
            js = json.dumps(b["input"])
            half = len(js) // 2
            for part in (js[:half], js[half:]):
                ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": part}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                 "usage": {"output_tokens": 20}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return ev


def message_json(msg_id, blocks, stop_reason):
    return {"id": msg_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": blocks, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None
    counter = [0]

    def log_message(self, fmt, *args):
        sys.stderr.write("mock: " + (fmt % args) + "\n")

    def reply(self, code, body, ctype="application/json"):
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_mock_%d" % self.counter[0])
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        self.state.log_request("GET", self.path, b"")
        path = self.path.split("?")[0]
        if path.startswith("/v1/models"):
            self.reply(200, {"data": [{"type": "model", "id": MODEL, "display_name": "Mock"}],
                             "has_more": False, "first_id": MODEL, "last_id": MODEL})
        else:
            self.reply(200, {})

    def do_HEAD(self):
        self.state.log_request("HEAD", self.path, b"")
        self.reply(200, b"")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        st = self.state
        st.log_request("POST", self.path, body)
        path = self.path.split("?")[0]
        try:
            req = json.loads(body) if body else {}
        except ValueError:
            req = {}
        if path.endswith("/count_tokens"):
            self.reply(200, {"input_tokens": 100})
            return
        if not path.endswith("/v1/messages"):
            self.reply(200, {})
            return
        with st.lock:
            self.counter[0] += 1
            msg_id = "msg_mock_%d" % self.counter[0]
            if is_main_loop(req, st):
                asked = read_conversation(req, st)
                if asked < len(st.steps):
                    s = st.steps[asked]
                    st.served.add(asked)
                    blocks = [{"type": "text", "text": "Step %s." % s.get("id", asked)},
                              {"type": "tool_use", "id": TOOL_ID % asked, "name": s["tool"],
                               "input": s["input"]}]
                    stop = "tool_use"
                else:
                    st.done = True
                    blocks = [{"type": "text", "text": st.final}]
                    stop = "end_turn"
            else:
                blocks = [{"type": "text", "text": "Mock session"}]
                stop = "end_turn"
            st.write_report()
        if req.get("stream"):
            self.reply(200, sse(message_events(msg_id, blocks, stop)), "text/event-stream")
        else:
            self.reply(200, message_json(msg_id, blocks, stop))


def main():
    return serve(Handler, State)


if __name__ == "__main__":
    sys.exit(main())
