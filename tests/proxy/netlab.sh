# netlab.sh — the egress proxy tests' network lab: two network namespaces on a veth pair, one
# playing the "outer" machine airlock runs on, one playing the internet.  Sourced by
# tests/proxy/run.sh and tests/bench/proxy_bench.sh; needs root and iproute2.
#
# ABSOLUTE RULE: no packet leaves the machine.  Nothing here touches the host's own namespace:
# both veth ends are created directly inside the lab's namespaces, neither namespace has a
# default route, and every command that sends traffic goes through guard.sh, which refuses to
# run unless it is inside the lab's OUTER namespace with only lo and the veth.
#
#   OUTER  (LAB_OUT, veth LAB_VO)         INTERNET  (LAB_INET, veth LAB_VI)
#   203.0.113.1/24, 2001:db8::1/64  <->   203.0.113.10/24 (+ .11, .12), 2001:db8::10/64 (+ ::11)
#   /etc/resolv.conf -> 203.0.113.10      servers.py: DNS 53, HTTP 80/8080, HTTPS 443/8443, echo 7000
#   /etc/hosts: loopback names and
#     203.0.113.12 lab-host.internal      (a name only the "host's" hosts file knows)
#     203.0.113.12 hosts.test.example     (the lab's DNS says 203.0.113.10: files win)
#
# `airlock run` is started in OUTER (lab_out), so the launcher's proxy resolves names with the
# lab's DNS and connects to the lab's servers.  The servers' logs (dns.log, http.log, https.log,
# conn.log, echo.log in $LAB_DIR) say what reached "the internet".
#
#   lab_init DIR            names and paths (DIR: a scratch directory, world-readable)
#   lab_up                  builds the lab; 1 with $LAB_ERR when it cannot
#   lab_down                removes every namespace, process and /etc/netns entry it made
#   lab_out CMD...          CMD in OUTER, through guard.sh (as root; put setpriv in CMD)
#   lab_inet CMD...         CMD in the internet namespace
#   lab_sweep               removes labs left by runs whose shell is gone (kill -9 of a test)
#
# Set LAB_HERE to this directory before sourcing.
# shellcheck disable=SC2034 # LAB_CA, LAB_ERR and the names are for the scripts that source this

LAB_PY=/usr/bin/python3

lab_init()
{
	LAB_DIR=$1
	LAB_TAG=$$
	LAB_OUT=allab-o-$LAB_TAG
	LAB_INET=allab-i-$LAB_TAG
	LAB_VO=alo$LAB_TAG
	LAB_VI=ali$LAB_TAG
	LAB_CA=$LAB_DIR/ca.pem
	LAB_UP=false
	LAB_MADE_ETC_NETNS=false
	LAB_ERR=""
}

# lab_sweep: deletes allab-* namespaces (and their /etc/netns entries) whose creating shell died.
lab_sweep()
{
	for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^allab-[oi]-[0-9]*$'); do
		pid=${n##*-}
		[ "$pid" = "$LAB_TAG" ] && continue
		kill -0 "$pid" 2>/dev/null && continue
		for p in $(ip netns pids "$n" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null
		done
		ip netns del "$n" 2>/dev/null
		rm -rf "/etc/netns/$n"
	done
}

_lab_fail()
{
	LAB_ERR=$1
	return 1
}

# lab_pki: the test CA and a server certificate for test.example and *.test.example.
lab_pki()
{
	(
		cd "$LAB_DIR" || exit 1
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
			-subj "/CN=airlock lab test CA" \
			-addext "basicConstraints=critical,CA:TRUE" \
			-addext "keyUsage=critical,keyCertSign,cRLSign" &&
			openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
				-subj "/CN=test.example" &&
			printf '%s\n' "subjectAltName=DNS:test.example,DNS:*.test.example,IP:203.0.113.10,IP:203.0.113.11" \
				"basicConstraints=CA:FALSE" "extendedKeyUsage=serverAuth" >server.ext &&
			openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
				-out server.pem -days 2 -extfile server.ext
	) >"$LAB_DIR/pki.out" 2>&1 || return 1
	chmod 644 "$LAB_DIR/ca.pem"
}

# lab_repo: a bare repository served over HTTPS with git's dumb protocol.
lab_repo()
{
	(
		set -e
		export HOME="$LAB_DIR" GIT_CONFIG_NOSYSTEM=1
		w=$LAB_DIR/repo-work
		mkdir -p "$w" "$LAB_DIR/www"
		cd "$w"
		git init -q -b main .
		printf 'served by the lab\n' >README
		git add README
		git -c user.name=lab -c user.email=lab@test.example commit -q -m "lab repo"
		git clone -q --bare "$w" "$LAB_DIR/www/repo.git"
		cd "$LAB_DIR/www/repo.git"
		git update-server-info
	) >"$LAB_DIR/repo.out" 2>&1
}

lab_up()
{
	lab_sweep
	mkdir -p "$LAB_DIR" && chmod 755 "$LAB_DIR" || _lab_fail "cannot make $LAB_DIR" || return 1
	lab_pki || _lab_fail "openssl failed: $(tail -n 3 "$LAB_DIR/pki.out")" || return 1
	lab_repo || _lab_fail "git failed: $(tail -n 3 "$LAB_DIR/repo.out")" || return 1

	ip netns add "$LAB_OUT" 2>"$LAB_DIR/ip.err" ||
		_lab_fail "ip netns add: $(cat "$LAB_DIR/ip.err")" || return 1
	LAB_UP=true
	ip netns add "$LAB_INET" 2>"$LAB_DIR/ip.err" ||
		_lab_fail "ip netns add: $(cat "$LAB_DIR/ip.err")" || return 1
	# Both ends are born inside the lab's namespaces: the host's namespace never holds either.
	ip link add "$LAB_VO" netns "$LAB_OUT" type veth peer name "$LAB_VI" netns "$LAB_INET" \
		2>"$LAB_DIR/ip.err" || _lab_fail "veth: $(cat "$LAB_DIR/ip.err")" || return 1
	{
		ip -n "$LAB_OUT" link set lo up &&
			ip -n "$LAB_OUT" addr add 203.0.113.1/24 dev "$LAB_VO" &&
			ip -n "$LAB_OUT" addr add 2001:db8::1/64 dev "$LAB_VO" nodad &&
			ip -n "$LAB_OUT" link set "$LAB_VO" up &&
			ip -n "$LAB_INET" link set lo up &&
			ip -n "$LAB_INET" addr add 203.0.113.10/24 dev "$LAB_VI" &&
			ip -n "$LAB_INET" addr add 203.0.113.11/24 dev "$LAB_VI" &&
			ip -n "$LAB_INET" addr add 203.0.113.12/24 dev "$LAB_VI" &&
			ip -n "$LAB_INET" addr add 2001:db8::10/64 dev "$LAB_VI" nodad &&
			ip -n "$LAB_INET" addr add 2001:db8::11/64 dev "$LAB_VI" nodad &&
			ip -n "$LAB_INET" link set "$LAB_VI" up
	} 2>"$LAB_DIR/ip.err" || _lab_fail "addresses: $(cat "$LAB_DIR/ip.err")" || return 1
	# Many short connections in the benchmark: a wide port range and TIME-WAIT reuse, per
	# namespace (these sysctls are per network namespace; the host's are untouched).
	for n in "$LAB_OUT" "$LAB_INET"; do
		ip netns exec "$n" sysctl -qw net.ipv4.ip_local_port_range="1024 65000" \
			net.ipv4.tcp_tw_reuse=1 >/dev/null 2>&1
	done

	# OUTER's resolver is the lab's DNS (ip netns exec bind-mounts /etc/netns/NAME/* over /etc).
	[ -d /etc/netns ] || LAB_MADE_ETC_NETNS=true
	mkdir -p "/etc/netns/$LAB_OUT"
	printf 'nameserver 203.0.113.10\noptions timeout:2 attempts:2\n' >"/etc/netns/$LAB_OUT/resolv.conf"
	# ... and its hosts file names two lab addresses (the sandbox must not see them; the
	# launcher's proxy resolves with them, files before DNS)
	printf '%s\n' '127.0.0.1 localhost' '::1 localhost ip6-localhost ip6-loopback' \
		'203.0.113.12 lab-host.internal' '203.0.113.12 hosts.test.example' \
		>"/etc/netns/$LAB_OUT/hosts"

	lab_out true || _lab_fail "guard.sh refuses the OUTER namespace it just made" || return 1

	rm -f "$LAB_DIR/ready"
	ip netns exec "$LAB_INET" "$LAB_PY" "$LAB_HERE/servers.py" "$LAB_DIR" \
		>"$LAB_DIR/servers.out" 2>&1 </dev/null &
	LAB_SERVERS=$!
	i=0
	while [ ! -e "$LAB_DIR/ready" ] && [ $i -lt 100 ] && kill -0 "$LAB_SERVERS" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$LAB_DIR/ready" ] || _lab_fail "servers.py did not start: $(tail -n 5 "$LAB_DIR/servers.out")" ||
		return 1
	# smoke: OUTER reaches the lab's DNS, HTTP and echo directly
	lab_out "$LAB_PY" -c '
import socket, sys, urllib.request
a = socket.getaddrinfo("api.test.example", 80, socket.AF_INET)[0][4][0]
assert a == "203.0.113.11", a
r = urllib.request.build_opener(urllib.request.ProxyHandler({})).open("http://test.example/smoke", timeout=5).read()
assert b"HTTP-ECHO host=test.example path=/smoke" in r, r
s = socket.create_connection(("203.0.113.12", 7000), timeout=5)
s.sendall(b"ping")
assert s.recv(4) == b"ping"
' >"$LAB_DIR/smoke.out" 2>&1 || _lab_fail "the lab does not answer from OUTER: $(tail -n 3 "$LAB_DIR/smoke.out")" ||
		return 1
	: >"$LAB_DIR/dns.log"
	: >"$LAB_DIR/http.log"
	: >"$LAB_DIR/conn.log"
	: >"$LAB_DIR/echo.log"
	return 0
}

lab_down()
{
	$LAB_UP || return 0
	for n in "$LAB_OUT" "$LAB_INET"; do
		# only processes inside our own namespaces: the servers and anything a test left there
		for p in $(ip netns pids "$n" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null
		done
	done
	[ -n "${LAB_SERVERS:-}" ] && wait "$LAB_SERVERS" 2>/dev/null
	ip netns del "$LAB_OUT" 2>/dev/null
	ip netns del "$LAB_INET" 2>/dev/null
	rm -rf "/etc/netns/$LAB_OUT"
	# /etc/netns itself only when this run made it and no other lab uses it now
	$LAB_MADE_ETC_NETNS && rmdir /etc/netns 2>/dev/null
	LAB_UP=false
}

lab_out()
{
	ip netns exec "$LAB_OUT" "$LAB_HERE/guard.sh" "$LAB_OUT" "$LAB_VO" -- "$@"
}

lab_inet()
{
	ip netns exec "$LAB_INET" "$@"
}

# lab_log_has FILE TEXT: the server log FILE ($LAB_DIR/FILE) contains TEXT (fixed string).
lab_log_has()
{
	grep -qF -- "$2" "$LAB_DIR/$1"
}
