#!/bin/sh
# deps.sh — checks that the Debian packages airlock builds and tests with are installed;
# installs the missing ones with apt-get when run as root, else prints the command; then the
# agent CLIs the agent tests drive (npm ci in tests/agents/clients).
# Usage: scripts/deps.sh [--check]   (--check: report only, exit 1 when something is missing)
set -eu

PACKAGES="gcc make pkg-config libyaml-dev libseccomp-dev libnl-3-dev libnl-route-3-dev \
libcmocka-dev bubblewrap clang libclang-rt-14-dev python3 perl git nodejs \
libpython3.11-testsuite libjson-c-dev libssl-dev diffutils \
curl iproute2 openssl libncurses-dev tmux podman runc"

missing=""
for p in $PACKAGES; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = "installed" ] || missing="$missing $p"
done

# The agent CLIs tests/agents drives (Claude Code, Codex CLI), pinned by
# tests/agents/clients/package-lock.json and installed there with npm ci.  Their tests skip
# (loudly) without them, so a failed install is reported, not fatal.
CLIENTS=$(cd "$(dirname "$0")/.." && pwd)/tests/agents/clients

# clients_installed: 0 when both CLIs run and report the versions the lock pins (claude must be
# the native binary: with its postinstall skipped, bin/claude.exe is a stub that fails).
clients_installed()
{
	want=$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["packages"]
print(p["node_modules/@anthropic-ai/claude-code"]["version"], p["node_modules/@openai/codex"]["version"])' \
		"$CLIENTS/package-lock.json" 2>/dev/null) || return 1
	have_claude=$("$CLIENTS/node_modules/.bin/claude" --version 2>/dev/null | awk 'NR == 1 {print $1}')
	have_codex=$("$CLIENTS/node_modules/.bin/codex" --version 2>/dev/null | awk 'NR == 1 {print $2}')
	[ "$want" = "$have_claude $have_codex" ]
}

# agent_clients [--check]: installs the agent CLIs unless they are there at the pinned versions.
agent_clients()
{
	clients_installed && return 0
	if [ "${1:-}" = "--check" ]; then
		echo "airlock: the agent CLIs are not installed in $CLIENTS (scripts/deps.sh installs them)" >&2
		return 0
	fi
	if ! command -v npm >/dev/null 2>&1; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "airlock: npm is missing: the agent tests will skip (sudo apt-get install -y npm)" >&2
			return 0
		fi
		echo "airlock: installing npm" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null ||
			{ echo "airlock: could not install npm: the agent tests will skip" >&2; return 0; }
	fi
	echo "airlock: installing the agent CLIs (npm ci in $CLIENTS)" >&2
	if ! npm ci --prefix "$CLIENTS" --no-audit --no-fund --loglevel=error >&2; then
		echo "airlock: npm ci failed: the agent tests will skip" >&2
		return 0
	fi
	# The wrapper's postinstall copies the native binary over its stub; npm may have skipped it.
	if ! clients_installed && [ -f "$CLIENTS/node_modules/@anthropic-ai/claude-code/install.cjs" ]; then
		(cd "$CLIENTS/node_modules/@anthropic-ai/claude-code" && node install.cjs >&2) || true
	fi
	clients_installed ||
		echo "airlock: the agent CLIs do not run after npm ci: the agent tests will skip" >&2
	return 0
}

if [ -n "$missing" ]; then
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
fi

agent_clients "${1:-}"
