#!/bin/sh
# guard.sh NETNS-NAME VETH CMD...: runs CMD only when this process is inside the lab's namespace
# NETNS-NAME (made by netlab.sh) and that namespace cannot reach anything but the lab:
#   - /proc/self/ns/net is the namespace `ip netns add NETNS-NAME` pinned at /run/netns/NETNS-NAME;
#   - its only interfaces are lo and VETH;
#   - no default route (IPv4 or IPv6), and every route of the main tables is inside the lab's
#     203.0.113.0/24 / 2001:db8::/64 (or IPv6 link-local / multicast on VETH).
# Otherwise it prints why and exits 99 without running CMD: no test traffic may leave the lab.
# Usage from the tests: ip netns exec OUTER guard.sh OUTER VETH -- program args...
set -u
if [ $# -lt 3 ]; then
	echo "usage: guard.sh NETNS-NAME VETH [--] CMD..." >&2
	exit 2
fi
ns=$1
veth=$2
shift 2
[ "${1:-}" = "--" ] && shift

refuse()
{
	echo "guard: refusing to run outside the lab namespace $ns: $*" >&2
	exit 99
}

want=$(stat -L -c %i "/run/netns/$ns" 2>/dev/null) || refuse "no /run/netns/$ns"
have=$(readlink /proc/self/ns/net | sed -n 's/^net:\[\([0-9]*\)\]$/\1/p')
if [ -z "$have" ] || [ "$have" != "$want" ]; then
	refuse "this is net namespace $have, the lab's is $want"
fi

links=$(ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort | tr '\n' ' ')
expect=$(printf '%s\n' lo "$veth" | sort | tr '\n' ' ')
[ "$links" = "$expect" ] || refuse "interfaces are \"$links\", expected \"$expect\""

[ -z "$(ip -4 route show default)" ] || refuse "an IPv4 default route exists"
[ -z "$(ip -6 route show default)" ] || refuse "an IPv6 default route exists"
bad4=$(ip -4 route show | grep -v '^203\.0\.113\.0/24 ' || true)
[ -z "$bad4" ] || refuse "unexpected IPv4 route: $bad4"
bad6=$(ip -6 route show | grep -vE '^(2001:db8::/64|fe80::/64|multicast ff00::/8) ' || true)
[ -z "$bad6" ] || refuse "unexpected IPv6 route: $bad6"

exec "$@"
