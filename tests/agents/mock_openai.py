#!/usr/bin/python3
"""mock_openai.py — a mock OpenAI Responses API that plays a scripted session to Codex CLI.

  mock_openai.py --listen ADDR:PORT --script SCRIPT --out DIR

Python 3 standard library only.  Serves until SIGTERM; writes DIR/ready once listening.  The
contract (arguments, SCRIPT, DIR/report.json, DIR/requests.jsonl) is tests/agents/lib.sh's.

Codex talks to it as to a model provider with wire_api "responses": each turn is POST
{base}/responses with "stream": true, answered with Server-Sent Events (response.created,
response.output_item.added / .done, response.completed).  A request carrying "tools" is the
main loop: its answer is the next step of SCRIPT as one function_call (or custom_tool_call)
item, its call_id "call_mock_N" (N the step's index); the function_call_output the agent sends
back for it is recorded.  Which step is next is read from the request itself (how many of our
calls its "input" already holds), so a retried request gets the same step again.  After the
last step the answer is the script's "final" text as an assistant message.  Other requests
(GET .../models, anything else) are logged and answered plainly.

Steps name tools abstractly, mapped to what the request declares:
  "tool": "shell", "input": {"command": TEXT [, "workdir": DIR]}  -> exec_command {"cmd"}
      (or shell_command {"command"}, or shell {"command": ["bash", "-lc", TEXT]})
  "tool": "apply_patch", "input": {"patch": TEXT}  -> apply_patch (a freeform custom tool:
      the patch is its input; a function tool: {"input": TEXT}); other keys (e.g. "file_path",
      which judge.py shows) are not sent
  any other "tool": a function_call of that name with "input" as its arguments.
A step's result is the tool output's text; is_error is true when it reports a nonzero exit
code ("Process exited with code N", "Exit code: N").  The report adds, per step, "sent_as" (the
tool name used), and at the top "tools" (the names the first main-loop request declared) and
"side" (the other requests: method and path).  A request body that is not plain JSON (e.g.
compressed) is recorded as base64 and named in "errors": the canary check could not see into it.
"""
import base64
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_serve import serve  # noqa: E402  (tests/agents/mock_serve.py)

CALL_PREFIX = "call_mock_"
EXIT_RE = re.compile(r"(?:Process exited with code|Exit code:) *(-?[0-9]+)")


class State:
    """The script, what was served and answered, and the files written."""

    def __init__(self, script, out):
        self.steps = script["steps"]
        self.final = script.get("final", "Done.")
        self.out = out
        self.lock = threading.Lock()
        self.tools = []
        self.side = []
        self.errors = []
        self.served = {}
        self.results = {}
        self.done = False
        self.requests = open(os.path.join(out, "requests.jsonl"), "a", encoding="utf-8")

    def log_request(self, method, path, raw, encoding):
        """Appends one request to requests.jsonl (caller holds the lock)."""
        try:
            if encoding and encoding != "identity":
                raise ValueError(encoding)
            body = raw.decode("utf-8")
        except ValueError:
            body = "base64:" + base64.b64encode(raw).decode()
            self.errors.append("%s %s: body not plain UTF-8 (Content-Encoding %r): "
                               "canaries cannot be checked in it" % (method, path, encoding))
        self.requests.write(json.dumps({"method": method, "path": path, "body": body}) + "\n")
        self.requests.flush()

    def write_report(self):
        steps = []
        for i, s in enumerate(self.steps):
            r = self.results.get(i)
            steps.append({"id": s.get("id", str(i)), "kind": s.get("kind", "legit"),
                          "tool": s["tool"], "input": s.get("input", {}),
                          "sent_as": self.served.get(i),
                          "served": i in self.served,
                          "answered": r is not None,
                          "result": r[0] if r else None,
                          "is_error": r[1] if r else None})
        rep = {"tools": self.tools, "side": self.side, "steps": steps,
               "done": self.done, "errors": self.errors}
        tmp = os.path.join(self.out, "report.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(rep, f, indent=1)
        os.replace(tmp, os.path.join(self.out, "report.json"))


def tool_name(t):
    """The name a tool entry of the request declares (function or custom)."""
    if "name" in t:
        return t["name"]
    if isinstance(t.get("function"), dict):
        return t["function"].get("name")
    return t.get("type")


def output_text(out):
    """A function_call_output's output as text (string or content items)."""
    if isinstance(out, str):
        return out
    if isinstance(out, list):
        return "".join(p.get("text", "") for p in out if isinstance(p, dict))
    if isinstance(out, dict):
        if "content" in out:
            return output_text(out["content"])
        return json.dumps(out)
    return json.dumps(out)


def translate(step, tools):
    """(item type, name, arguments-or-input string) for a step, given the
    request's tools {name: spec}."""
    tool = step["tool"]
    a = step.get("input", {})
    if tool == "shell":
        cmd = a["command"]
        wd = a.get("workdir")
        if "exec_command" in tools:
            args = {"cmd": cmd}
            if wd:
                args["workdir"] = wd
            args["yield_time_ms"] = a.get("yield_time_ms", 30000)
            return "function_call", "exec_command", json.dumps(args)
        if "shell_command" in tools:
            args = {"command": cmd}
            if wd:
                args["workdir"] = wd
            return "function_call", "shell_command", json.dumps(args)
        if "shell" in tools:
            args = {"command": ["bash", "-lc", cmd]}
            if wd:
                args["workdir"] = wd
            return "function_call", "shell", json.dumps(args)
        raise KeyError("no shell tool among %s" % sorted(tools))
    if tool == "apply_patch":
        spec = tools.get("apply_patch")
        if spec is None:
            raise KeyError("no apply_patch tool among %s" % sorted(tools))
        if spec.get("type") == "custom":
            return "custom_tool_call", "apply_patch", a["patch"]
        return "function_call", "apply_patch", json.dumps({"input": a["patch"]})
    return "function_call", tool, json.dumps(a)


def sse(wfile, event, data):
    data = dict(data)
    data["type"] = event
    wfile.write(("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode())
    wfile.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-openai/1"
    state = None

    def log_message(self, fmt, *a):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def side_request(self, note=None):
        st = self.state
        with st.lock:
            ent = {"method": self.command, "path": self.path}
            if note:
                ent["note"] = note
            st.side.append(ent)
            st.write_report()

    def do_GET(self):
        with self.state.lock:
            self.state.log_request("GET", self.path, b"", None)
        self.side_request()
        if self.path.split("?")[0].endswith("/models"):
            self.send_json(200, {"object": "list", "data": [
                {"id": "gpt-5.5", "object": "model", "created": 0, "owned_by": "mock"}],
                "models": []})
            return
        self.send_json(404, {"error": {"message": "not here", "type": "not_found"}})

    def do_POST(self):
        st = self.state
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        enc = self.headers.get("Content-Encoding")
        with st.lock:
            st.log_request("POST", self.path, raw, enc)
        try:
            body = json.loads(raw.decode("utf-8")) if not enc else None
        except ValueError:
            body = None
        if not self.path.split("?")[0].endswith("/responses") or not isinstance(body, dict):
            self.side_request()
            self.send_json(404, {"error": {"message": "not here", "type": "not_found"}})
            return
        tools = {}
        for t in body.get("tools") or []:
            if isinstance(t, dict) and tool_name(t):
                tools[tool_name(t)] = t
        if not tools:
            self.side_request("no tools: answered with a message")
            self.stream(body, [("message", "ok")])
            return
        self.stream(body, [self.main_loop(st, body, tools)])

    def main_loop(self, st, body, tools):
        """The item answering a main-loop request; records the outputs it carries."""
        sent = set()
        for it in body.get("input") or []:
            if not isinstance(it, dict):
                continue
            cid = it.get("call_id")
            if not isinstance(cid, str) or not cid.startswith(CALL_PREFIX):
                continue
            try:
                i = int(cid[len(CALL_PREFIX):])
            except ValueError:
                continue
            if it.get("type") in ("function_call", "custom_tool_call"):
                sent.add(i)
            elif it.get("type") in ("function_call_output", "custom_tool_call_output"):
                text = output_text(it.get("output"))
                m = EXIT_RE.search(text)
                with st.lock:
                    st.results[i] = (text, bool(m and int(m.group(1)) != 0))
        with st.lock:
            if not st.tools:
                st.tools = sorted(tools)
            i = len(sent)
            if i >= len(st.steps):
                st.done = True
                st.write_report()
                return ("message", st.final)
            try:
                typ, name, args = translate(st.steps[i], tools)
            except KeyError as e:
                st.errors.append("step %s: %s" % (st.steps[i].get("id", i), e))
                st.done = True
                st.write_report()
                return ("message", "The mock cannot play this step: %s" % e)
            st.served[i] = name
            st.write_report()
            return (typ, name, args, CALL_PREFIX + str(i))

    def stream(self, body, items):
        rid = "resp_mock_%d" % int(time.time() * 1e6)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        model = body.get("model", "mock-model")
        resp = {"id": rid, "object": "response", "created_at": int(time.time()),
            "status": "in_progress", "model": model, "output": []}
        sse(self.wfile, "response.created", {"response": resp})
        out = []
        for n, it in enumerate(items):
            if it[0] == "message":
                mid = "msg_mock_%d" % n
                item = {"type": "message", "id": mid, "role": "assistant",
                    "status": "in_progress", "content": []}
                sse(self.wfile, "response.output_item.added",
                    {"output_index": n, "item": item})
                sse(self.wfile, "response.output_text.delta",
                    {"output_index": n, "item_id": mid,
                     "content_index": 0, "delta": it[1]})
                item = dict(item, status="completed", content=[
                    {"type": "output_text", "text": it[1],
                     "annotations": []}])
            elif it[0] == "function_call":
                item = {"type": "function_call", "id": "fc_" + it[3],
                    "call_id": it[3], "name": it[1],
                    "arguments": it[2], "status": "completed"}
                sse(self.wfile, "response.output_item.added",
                    {"output_index": n, "item": dict(item, arguments="",
                                    status="in_progress")})
                sse(self.wfile, "response.function_call_arguments.delta",
                    {"output_index": n, "item_id": item["id"],
                     "delta": it[2]})
            else:
                item = {"type": "custom_tool_call", "id": "ctc_" + it[3],
                    "call_id": it[3], "name": it[1],
                    "input": it[2], "status": "completed"}
                sse(self.wfile, "response.output_item.added",
                    {"output_index": n, "item": dict(item, input="",
                                    status="in_progress")})
            sse(self.wfile, "response.output_item.done",
                {"output_index": n, "item": item})
            out.append(item)
        resp = dict(resp, status="completed", output=out, usage={
            "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15})
        sse(self.wfile, "response.completed", {"response": resp})


def main():
    return serve(Handler, State)


if __name__ == "__main__":
    sys.exit(main())
