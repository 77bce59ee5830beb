#!/bin/sh
# deps.sh — checks that the Debian packages airlock builds and tests with are installed;
# installs the missing ones with apt-get when run as root, else prints the command.
# Usage: scripts/deps.sh [--check]   (--check: report only, exit 1 when something is missing)
set -eu

PACKAGES="gcc make pkg-config libyaml-dev libseccomp-dev libnl-3-dev libnl-route-3-dev \
libcmocka-dev bubblewrap clang libclang-rt-14-dev python3 perl git nodejs \
libpython3.11-testsuite libjson-c-dev \
curl iproute2 openssl libncurses-dev tmux"

missing=""
for p in $PACKAGES; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = "installed" ] || missing="$missing $p"
done

[ -z "$missing" ] && exit 0

if [ "${1:-}" = "--check" ]; then
	echo "airlock: missing Debian packages:$missing" >&2
	exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
	echo "airlock: installing missing Debian packages:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
	echo "airlock: missing Debian packages:$missing" >&2
	echo "airlock: install them with:  sudo apt-get install -y$missing" >&2
	exit 1
fi
