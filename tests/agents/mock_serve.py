"""mock_serve.py — what the mock model APIs share: their command line and their server's life.

  serve(Handler, State): parses --listen HOST:PORT --script FILE --out DIR, sets Handler.state to
  State(script, DIR), writes DIR/report.json (State.write_report) and DIR/ready, serves until
  SIGTERM or SIGINT, then writes the report once more under State.lock.  Returns 0.
"""
import argparse
import json
import os
import signal
import threading
from http.server import ThreadingHTTPServer


def serve(handler, state_class):
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    host, port = a.listen.rsplit(":", 1)
    with open(a.script, encoding="utf-8") as f:
        script = json.load(f)
    handler.state = state_class(script, a.out)
    srv = ThreadingHTTPServer((host, int(port)), handler)
    srv.daemon_threads = True

    def stop(_sig, _frm):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    handler.state.write_report()
    open(os.path.join(a.out, "ready"), "w").close()
    srv.serve_forever()
    with handler.state.lock:
        handler.state.write_report()
    return 0
