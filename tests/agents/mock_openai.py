#!/usr/bin/env python3
"""A mock OpenAI Responses API that plays a scripted coding session (stdlib only).

Codex CLI talks to it as to a model provider (wire_api = "responses"): every
turn is POST {base}/responses with "stream": true, answered with Server-Sent
Events. A main-loop request (one carrying the agent's "tools") gets the next
step of the script as one function_call item; when the script is over it gets a
final assistant message. The step that comes next is counted from the request
itself (how many of the mock's own call ids its "input" already carries), so a
retried request gets the same step again rather than skipping one.

For each step the mock records the function_call_output the agent sent back in
the following request; every request body goes to --requests (JSON Lines) so a
test can check that no secret ever reached the "model"; side requests (models
list, anything else) are answered with something harmless and logged.

  mock_openai.py --script S.json --report R.json --requests Q.jsonl
                 [--host 127.0.0.1] [--port 0] [--port-file F] [--log F]

Script: {"steps": [{"id": "ls", "kind": "legit"|"hostile",
                    "tool": "shell"|"apply_patch"|NAME, "arguments": {...}}...],
         "final": "text of the last message"}
"tool": "shell" with arguments {"command": "..."} is sent as whatever shell
tool the request declares (exec_command's "cmd", shell's "command" argv, or
shell_command's "command" string); "apply_patch" with {"patch": "..."} as the
declared apply_patch tool (a freeform/custom tool gets the patch as its input,
a function tool gets {"input": patch}).
The report (rewritten after every request): {"tools": [names declared],
"main_requests": N, "side_requests": [...], "steps": [{"id", "kind", "tool",
"arguments", "served": bool, "output": text|null}...], "done": bool}.
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CALL_PREFIX = "call_mock_"


class State:
    """The script, what was served and answered, and the files written."""

    def __init__(self, args):
        with open(args.script) as f:
            script = json.load(f)
        self.steps = script["steps"]
        self.final = script.get("final", "Done.")
        self.report_path = args.report
        self.requests_path = args.requests
        self.log_path = args.log
        self.lock = threading.Lock()
        self.tools = []
        self.tool_specs = []
        self.main_requests = 0
        self.side = []
        self.results = [{"id": s["id"], "kind": s.get("kind", "legit"),
                 "tool": s["tool"], "arguments": s.get("arguments", {}),
                 "sent_as": None, "served": False, "output": None}
                for s in self.steps]
        self.done = False
        self.write_report()

    def log(self, msg):
        if self.log_path:
            with open(self.log_path, "a") as f:
                f.write("%.3f %s\n" % (time.time(), msg))

    def record_body(self, method, path, body):
        if not self.requests_path:
            return
        with open(self.requests_path, "a") as f:
            f.write(json.dumps({"method": method, "path": path,
                        "body": body}) + "\n")

    def write_report(self):
        rep = {"tools": self.tools, "tool_specs": self.tool_specs,
               "main_requests": self.main_requests,
               "side_requests": self.side, "steps": self.results,
               "done": self.done}
        tmp = self.report_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(rep, f, indent=1)
        os.replace(tmp, self.report_path)


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
    a = step.get("arguments", {})
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

    def log_message(self, fmt, *a):
        self.server.state.log("%s %s" % (self.address_string(), fmt % a))

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding", "") == "zstd":
            return {"_undecoded_zstd": len(raw)}, raw
        try:
            return json.loads(raw or b"null"), raw
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}, raw

    def do_GET(self):
        st = self.server.state
        path = self.path.split("?")[0]
        with st.lock:
            st.side.append({"method": "GET", "path": self.path})
            st.record_body("GET", self.path, None)
            st.write_report()
        if path.endswith("/models"):
            self.send_json(200, {"object": "list", "data": [
                {"id": "mock-model", "object": "model",
                 "created": 0, "owned_by": "mock"}], "models": []})
            return
        self.send_json(404, {"error": {"message": "not here",
                          "type": "not_found"}})

    def do_POST(self):
        st = self.server.state
        body, raw = self.read_body()
        path = self.path.split("?")[0]
        with st.lock:
            st.record_body("POST", self.path, body)
        if not path.endswith("/responses") or not isinstance(body, dict):
            with st.lock:
                st.side.append({"method": "POST", "path": self.path})
                st.write_report()
            self.send_json(404, {"error": {"message": "not here",
                              "type": "not_found"}})
            return
        tools = {}
        for t in body.get("tools") or []:
            if isinstance(t, dict) and tool_name(t):
                tools[tool_name(t)] = t
        if not tools:
            with st.lock:
                st.side.append({"method": "POST", "path": self.path,
                        "kind": "no-tools"})
                st.write_report()
            self.stream(body, [("message", "ok")])
            return
        self.main_loop(st, body, tools)

    def main_loop(self, st, body, tools):
        inp = body.get("input") or []
        sent = set()
        outputs = {}
        for it in inp:
            if not isinstance(it, dict):
                continue
            cid = it.get("call_id") or ""
            if not cid.startswith(CALL_PREFIX):
                continue
            if it.get("type") in ("function_call", "custom_tool_call"):
                sent.add(cid)
            elif it.get("type") in ("function_call_output",
                        "custom_tool_call_output"):
                outputs[cid] = output_text(it.get("output"))
        with st.lock:
            st.main_requests += 1
            if not st.tools:
                st.tools = sorted(tools)
                st.tool_specs = [tools[n] for n in sorted(tools)]
            for cid, text in outputs.items():
                i = int(cid[len(CALL_PREFIX):])
                if i < len(st.results):
                    st.results[i]["output"] = text
            i = len(sent)
            if i >= len(st.steps):
                st.done = True
                st.write_report()
                item = ("message", st.final)
            else:
                try:
                    typ, name, args = translate(st.steps[i], tools)
                except KeyError as e:
                    st.results[i]["output"] = "MOCK: %s" % e
                    st.done = True
                    st.write_report()
                    item = ("message", "cannot: %s" % e)
                else:
                    st.results[i]["served"] = True
                    st.results[i]["sent_as"] = name
                    st.write_report()
                    item = (typ, name, args, CALL_PREFIX + str(i))
            st.log("main request %d -> %s" % (st.main_requests, item[:2]))
        self.stream(body, [item])

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
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--requests")
    ap.add_argument("--log")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    args = ap.parse_args()
    srv = ThreadingHTTPServer((args.host, args.port), Handler)
    srv.daemon_threads = True
    srv.state = State(args)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.replace(tmp, args.port_file)
    srv.state.log("listening on %s:%d" % srv.server_address[:2])
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
