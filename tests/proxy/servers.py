#!/usr/bin/python3
"""servers.py — the lab's "internet": every server the proxy tests talk to, in one process.

Run by netlab.sh inside the INTERNET network namespace (never anywhere else: it refuses to start
unless the only interfaces it sees are lo and the lab's veth), as

    servers.py DIR

DIR holds the test CA's server certificate (server.pem, server.key), the bare git repository
(www/repo.git, after `git update-server-info`) and receives the logs, one line per event, flushed:

    dns.log     every DNS query that arrives:      "QTYPE NAME FROM"
    http.log    every HTTP request (ports 80, 8080): "PORT HOST PATH METHOD BODY-BYTES-RECEIVED"
    https.log   every TLS request (443, 8443):      "PORT SNI HOST PATH METHOD"
    conn.log    every TCP connection accepted:      "PORT LOCAL-ADDR PEER-ADDR"
    echo.log    every echo connection (7000):       "LOCAL-ADDR BYTES"

Servers (all on every address of the namespace, IPv4 and IPv6, unless said):

    53/udp+tcp  DNS for test names: test.example, denied.test.example and any other
                *.test.example -> A 203.0.113.10 / AAAA 2001:db8::10; api.test.example ->
                203.0.113.11 / 2001:db8::11; every other name NXDOMAIN.  Never recursive.
    80, 8080    HTTP: GET answers "HTTP-ECHO host=H path=P method=M local=L"; POST/PUT read the
                body (Content-Length) and answer "RECEIVED n"; /big?n=N sends N bytes of 'x'.
    443, 8443   HTTPS with the lab CA's certificate (test.example, *.test.example): GET on
                /repo.git/... serves the bare repository's files (git's "dumb" HTTP protocol),
                anything else answers "HTTPS-ECHO sni=S host=H path=P".
    7000        TCP echo: sends back what it reads, until end-of-file.

The port-80 answer also names the local address the connection reached, so a test can tell which
of the lab addresses the proxy connected to.
"""
import http.server
import os
import socket
import socketserver
import ssl
import struct
import subprocess
import sys
import threading

DIR = sys.argv[1]
LOCK = threading.Lock()


def log(name, line):
    with LOCK:
        with open(os.path.join(DIR, name), "a") as f:
            f.write(line + "\n")


def refuse_outside_lab():
    # The only interfaces here must be lo and the lab's veth (named ali*): anything else means
    # this is not the namespace netlab.sh made, and no server may start.
    names = sorted(n for _, n in socket.if_nameindex())
    if len(names) != 2 or "lo" not in names or not [n for n in names if n.startswith("al")]:
        sys.stderr.write("servers.py: refusing to start outside the lab namespace (interfaces: %s)\n"
                         % ", ".join(names))
        sys.exit(99)


# ---- DNS ------------------------------------------------------------------------------------------

ZONE_A = {"api.test.example": "203.0.113.11"}
ZONE_AAAA = {"api.test.example": "2001:db8::11"}


def dns_lookup(name, qtype):
    """[(type, rdata bytes)] and rcode for a question."""
    n = name.lower().rstrip(".")
    if n != "test.example" and not n.endswith(".test.example"):
        return [], 3
    if qtype == 1:
        return [(1, socket.inet_pton(socket.AF_INET, ZONE_A.get(n, "203.0.113.10")))], 0
    if qtype == 28:
        return [(28, socket.inet_pton(socket.AF_INET6, ZONE_AAAA.get(n, "2001:db8::10")))], 0
    return [], 0


def dns_answer(q, peer):
    if len(q) < 12:
        return None
    qid, flags, qd = struct.unpack("!HHH", q[:6])
    if qd != 1 or flags & 0x8000:
        return None
    i, labels = 12, []
    while i < len(q) and q[i]:
        ln = q[i]
        if ln & 0xC0:
            return None
        labels.append(q[i + 1:i + 1 + ln].decode("ascii", "replace"))
        i += 1 + ln
    if i + 5 > len(q):
        return None
    name = ".".join(labels)
    qtype, _qclass = struct.unpack("!HH", q[i + 1:i + 5])
    question = q[12:i + 5]
    log("dns.log", "%d %s %s" % (qtype, name or ".", peer))
    answers, rcode = dns_lookup(name, qtype)
    out = struct.pack("!HHHHHH", qid, 0x8400 | (flags & 0x0100) | rcode, 1, len(answers), 0, 0)
    out += question
    for t, rdata in answers:
        out += struct.pack("!HHHIH", 0xC00C, t, 1, 60, len(rdata)) + rdata
    return out


def dns_udp(fam, addr):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, 53))
    while True:
        q, peer = s.recvfrom(4096)
        try:
            r = dns_answer(q, peer[0])
        except Exception as e:  # a malformed query is logged and dropped
            log("dns.log", "ERR %r %s" % (e, peer[0]))
            continue
        if r:
            s.sendto(r, peer)


class DnsTcp(socketserver.BaseRequestHandler):
    def handle(self):
        f = self.request.makefile("rb")
        while True:
            h = f.read(2)
            if len(h) < 2:
                return
            q = f.read(struct.unpack("!H", h)[0])
            r = dns_answer(q, self.client_address[0])
            if r:
                self.request.sendall(struct.pack("!H", len(r)) + r)


# ---- TCP servers on every address, v4 and v6 ------------------------------------------------------


class DualStack(socketserver.ThreadingTCPServer):
    address_family = socket.AF_INET6
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 512

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

    def verify_request(self, request, client_address):
        log("conn.log", "%d %s %s" % (self.server_address[1], unmap(request.getsockname()[0]),
                                      unmap(client_address[0])))
        return True


def unmap(a):
    return a[7:] if a.startswith("::ffff:") else a


class Http(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "lab/1"

    def log_message(self, *args):
        pass

    def reply(self, body, code=200, ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def local(self):
        return unmap(self.connection.getsockname()[0])

    def do_GET(self):
        port = self.server.server_address[1]
        host = self.headers.get("Host", "")
        log("http.log", "%d %s %s %s 0" % (port, host, self.path, self.command))
        if self.path.startswith("/big?n="):
            n = int(self.path.split("=", 1)[1])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            chunk = b"x" * 65536
            while n > 0:
                self.wfile.write(chunk[:min(n, len(chunk))])
                n -= min(n, len(chunk))
            return
        self.reply(("HTTP-ECHO host=%s path=%s method=%s local=%s\n"
                    % (host, self.path, self.command, self.local())).encode())

    do_HEAD = do_GET

    def do_POST(self):
        port = self.server.server_address[1]
        host = self.headers.get("Host", "")
        want = int(self.headers.get("Content-Length", "0"))
        got = 0
        try:
            if self.headers.get("Expect", "").lower() == "100-continue":
                self.send_response_only(100)
                self.end_headers()
            while got < want:
                b = self.rfile.read1(min(65536, want - got))
                if not b:
                    break
                got += len(b)
        except OSError:
            pass
        log("http.log", "%d %s %s %s %d" % (port, host, self.path, self.command, got))
        if got == want:
            self.reply(("RECEIVED %d\n" % got).encode())
        else:
            self.close_connection = True

    do_PUT = do_POST


class Https(Http):
    def do_GET(self):
        port = self.server.server_address[1]
        host = self.headers.get("Host", "")
        sni = getattr(self.connection, "lab_sni", None) or "-"
        log("https.log", "%d %s %s %s %s" % (port, sni, host, self.path, self.command))
        if self.path.startswith("/repo.git/"):
            rel = self.path.split("?", 1)[0][len("/"):]
            p = os.path.normpath(os.path.join(DIR, "www", rel))
            if not p.startswith(os.path.join(DIR, "www") + "/") or not os.path.isfile(p):
                self.reply(b"not found\n", 404)
                return
            with open(p, "rb") as f:
                self.reply(f.read(), ctype="application/octet-stream")
            return
        self.reply(("HTTPS-ECHO sni=%s host=%s path=%s\n" % (sni, host, self.path)).encode())

    do_HEAD = do_GET


class TlsServer(DualStack):
    def __init__(self, addr, handler, ctx):
        self.ctx = ctx
        super().__init__(addr, handler)

    def get_request(self):
        sock, peer = self.socket.accept()
        return sock, peer

    def finish_request(self, request, client_address):
        try:
            request.settimeout(10)
            tls = self.ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            log("https.log", "%d TLS-FAILED %s" % (self.server_address[1], e.__class__.__name__))
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        n = 0
        while True:
            try:
                b = self.request.recv(65536)
            except OSError:
                break
            if not b:
                break
            n += len(b)
            self.request.sendall(b)
        log("echo.log", "%s %d" % (unmap(self.request.getsockname()[0]), n))


def serve(server):
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    return t


def main():
    refuse_outside_lab()
    for name in ("dns.log", "http.log", "https.log", "conn.log", "echo.log"):
        open(os.path.join(DIR, name), "a").close()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(DIR, "server.pem"), os.path.join(DIR, "server.key"))
    # the SNI the client sent, kept on the connection's own socket (no state shared between them)
    ctx.sni_callback = lambda sslsock, name, _ctx: setattr(sslsock, "lab_sni", name)
    for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        threading.Thread(target=dns_udp, args=(fam, addr), daemon=True).start()
    serve(DualStack(("::", 53), DnsTcp))
    serve(DualStack(("::", 80), Http))
    serve(DualStack(("::", 8080), Http))
    serve(TlsServer(("::", 443), Https, ctx))
    serve(TlsServer(("::", 8443), Https, ctx))
    serve(DualStack(("::", 7000), Echo))
    with open(os.path.join(DIR, "ready.tmp"), "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(os.path.join(DIR, "ready.tmp"), os.path.join(DIR, "ready"))
    threading.Event().wait()


if __name__ == "__main__":
    main()
