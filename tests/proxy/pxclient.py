#!/usr/bin/python3
"""pxclient.py — hand-made requests to the sandbox's proxy ports, for the attack cases of
tests/proxy/run.sh.  Runs INSIDE `airlock run`; never talks to anything but the sandbox's own
listeners (every address is local in the sandbox's namespace).

  pxclient.py abs URL [HOST-HEADER]    absolute-form GET through the HTTP proxy (127.0.0.1:3128)
  pxclient.py connect AUTHORITY [HOST] CONNECT AUTHORITY; on 200, GET / (plain HTTP) inside
  pxclient.py socks HOST PORT [HOST]   SOCKS5 (127.0.0.1:1080), domain address type; on success GET /
  pxclient.py direct ADDR PORT HOST    connect to ADDR:PORT (transparent), GET / with Host: HOST
  pxclient.py tls ADDR PORT SNI CA PATH  connect to ADDR:PORT (transparent), TLS with server name
                                       SNI (verified against CA), GET PATH with Host: SNI
  pxclient.py spellings PORT S...      abs, connect and socks for each spelling S on PORT
  pxclient.py resolve NAME             prints the address the sandbox's DNS gives NAME
  pxclient.py upload URL N             POST N bytes through the HTTP proxy, report how far it got

direct and tls take --raw first (pxclient.py --raw direct ...): the connect(2) is then made with
syscall(2) through ctypes, which the shim does not hook — as a program that bypasses the shim
would — so the proxy alone decides (x86_64 and aarch64).

Each request prints one line: "RESULT <what> <how>", where <how> is "reached: <first line of
the server's answer>" when a lab server answered (its answers start with HTTP-ECHO / HTTPS-ECHO /
RECEIVED), or "refused: <why>" (a proxy error status, a SOCKS failure code, a reset, an
end-of-file, a timeout).  Exit status 0 unless the arguments are wrong.
"""
import ctypes
import os
import platform
import socket
import ssl
import struct
import sys
import time
from urllib.parse import urlsplit

PROXY = ("127.0.0.1", 3128)
SOCKS = ("127.0.0.1", 1080)
TIMEOUT = 8


def read_all(s, limit=65536):
    data = b""
    s.settimeout(TIMEOUT)
    try:
        while len(data) < limit:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except socket.timeout:
        data += b"\n<timeout>"
    except OSError as e:
        data += ("\n<%s>" % e.__class__.__name__).encode()
    return data


def verdict(data):
    text = data.decode("latin-1")
    for marker in ("HTTP-ECHO", "HTTPS-ECHO", "RECEIVED"):
        i = text.find(marker)
        if i >= 0:
            return "reached: " + text[i:].split("\n", 1)[0]
    first = text.split("\r\n", 1)[0].split("\n", 1)[0].strip()
    return "refused: " + (first or "end-of-file")


def out(what, how, t0):
    print("RESULT %s %s (%d ms)" % (what, how, (time.monotonic() - t0) * 1000), flush=True)


def req(host_header, path="/"):
    return ("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, host_header)).encode()


def do_abs(url, host=None):
    t0 = time.monotonic()
    u = urlsplit(url)
    host = host or u.netloc
    try:
        s = socket.create_connection(PROXY, timeout=TIMEOUT)
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (url, host)).encode())
        out("abs " + url, verdict(read_all(s)), t0)
    except OSError as e:
        out("abs " + url, "refused: %s" % e, t0)


def do_connect(auth, host=None):
    t0 = time.monotonic()
    try:
        s = socket.create_connection(PROXY, timeout=TIMEOUT)
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (auth, auth)).encode())
        s.settimeout(TIMEOUT)
        head = b""
        while b"\r\n\r\n" not in head:
            b = s.recv(4096)
            if not b:
                break
            head += b
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        if " 200" not in status:
            out("connect " + auth, "refused: " + (status or "end-of-file"), t0)
            return
        s.sendall(req(host or auth.rsplit(":", 1)[0]))
        out("connect " + auth, verdict(read_all(s)), t0)
    except OSError as e:
        out("connect " + auth, "refused: %s" % e, t0)


SOCKS_REP = {1: "general failure", 2: "not allowed by ruleset", 3: "network unreachable",
             4: "host unreachable", 5: "connection refused", 6: "TTL expired",
             7: "command not supported", 8: "address type not supported"}


def do_socks(host, port, hdr=None):
    t0 = time.monotonic()
    what = "socks %s:%d" % (host, port)
    try:
        s = socket.create_connection(SOCKS, timeout=TIMEOUT)
        s.settimeout(TIMEOUT)
        s.sendall(b"\x05\x01\x00")
        if s.recv(2) != b"\x05\x00":
            out(what, "refused: no method", t0)
            return
        h = host.encode()
        s.sendall(b"\x05\x01\x00\x03" + bytes([len(h)]) + h + port.to_bytes(2, "big"))
        r = b""
        while len(r) < 10:
            b = s.recv(10 - len(r))
            if not b:
                break
            r += b
        if len(r) < 2 or r[1] != 0:
            code = r[1] if len(r) > 1 else -1
            out(what, "refused: SOCKS reply %d %s" % (code, SOCKS_REP.get(code, "")), t0)
            return
        s.sendall(req(hdr or host))
        out(what, verdict(read_all(s)), t0)
    except OSError as e:
        out(what, "refused: %s" % e, t0)


RAW = False
SYS_CONNECT = {"x86_64": 42, "aarch64": 203}


def dial(addr, port):
    """A connected socket; with RAW, connected by syscall(SYS_connect), past the shim."""
    if not RAW:
        return socket.create_connection((addr, port), timeout=TIMEOUT)
    nr = SYS_CONNECT.get(platform.machine())
    if nr is None:
        raise OSError("--raw: unknown syscall number on %s" % platform.machine())
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sa = struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton(addr) + bytes(8)
    libc = ctypes.CDLL(None, use_errno=True)
    r = libc.syscall(ctypes.c_long(nr), ctypes.c_long(s.fileno()), ctypes.c_char_p(sa),
                     ctypes.c_long(len(sa)))
    if r != 0:
        e = ctypes.get_errno()
        s.close()
        raise OSError(e, "raw connect: " + os.strerror(e))
    s.settimeout(TIMEOUT)
    return s


def do_tls(addr, port, sni, ca, path):
    t0 = time.monotonic()
    what = "tls %s:%d sni=%s" % (addr, port, sni)
    try:
        s = dial(addr, port)
        ctx = ssl.create_default_context(cafile=ca)
        t = ctx.wrap_socket(s, server_hostname=sni)
        t.sendall(req(sni, path))
        out(what, verdict(read_all(t)), t0)
    except (OSError, ssl.SSLError) as e:
        out(what, "refused: %s" % e, t0)


def do_direct(addr, port, host):
    t0 = time.monotonic()
    what = "direct %s:%d" % (addr, port)
    try:
        s = dial(addr, port)
        s.sendall(req(host))
        out(what, verdict(read_all(s)), t0)
    except OSError as e:
        out(what, "refused: %s" % e, t0)


def do_upload(url, n):
    t0 = time.monotonic()
    u = urlsplit(url)
    sent = 0
    try:
        s = socket.create_connection(PROXY, timeout=TIMEOUT)
        s.sendall(("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                   % (url, u.netloc, n)).encode())
        chunk = b"u" * 4096
        while sent < n:
            sent += s.send(chunk[:min(4096, n - sent)])
        s.shutdown(socket.SHUT_WR)
        out("upload %d sent %d" % (n, sent), verdict(read_all(s)), t0)
    except OSError as e:
        out("upload %d sent %d" % (n, sent), "refused: %s" % e, t0)


def main():
    global RAW
    a = sys.argv[1:]
    if a[:1] == ["--raw"]:
        RAW, a = True, a[1:]
    if not a:
        sys.exit(__doc__)
    if a[0] == "abs":
        do_abs(a[1], a[2] if len(a) > 2 else None)
    elif a[0] == "connect":
        do_connect(a[1], a[2] if len(a) > 2 else None)
    elif a[0] == "socks":
        do_socks(a[1], int(a[2]), a[3] if len(a) > 3 else None)
    elif a[0] == "direct":
        do_direct(a[1], int(a[2]), a[3])
    elif a[0] == "tls":
        do_tls(a[1], int(a[2]), a[3], a[4], a[5])
    elif a[0] == "spellings":
        port = int(a[1])
        for sp in a[2:]:
            host = "[%s]" % sp if ":" in sp else sp
            do_abs("http://%s:%d/spelling" % (host, port))
            do_connect("%s:%d" % (host, port), host)
            do_socks(sp, port)
    elif a[0] == "resolve":
        print(socket.getaddrinfo(a[1], 80, socket.AF_INET, socket.SOCK_STREAM)[0][4][0])
    elif a[0] == "upload":
        do_upload(a[1], int(a[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
