# Makefile — builds airlock (the launcher), the policy library, tests, benchmarks and fuzz targets.
#
#   make            build/airlock and build/libairlock-policy.a
#   make deps       install the Debian packages the project needs (root), else print the command
#   make check      every test, then the unit tests again under ASan+UBSan, then a fuzz smoke run
#   make bench      every benchmark; each figure is one line "bench: NAME VALUE UNIT"
#   make fuzz       the libFuzzer targets, FUZZ_RUNS executions each (2 million; FUZZ_TIME s at most)
#   make demo       the example agent's actions decided by the built-in default policy
#
# Variables: CC (gcc or clang), BUILD (output dir), SAN=1 (ASan+UBSan build).

CC ?= cc
BUILD ?= build
OPT ?= -O2
FUZZ_CC ?= clang
FUZZ_TIME ?= 3600
FUZZ_RUNS ?= 2000000
FUZZ_SMOKE_TIME ?= 8

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
	-Wno-format-nonliteral
NL_CFLAGS := $(shell pkg-config --cflags libnl-route-3.0 2>/dev/null || echo -I/usr/include/libnl3)
CFLAGS_ALL := -std=gnu11 -g $(OPT) $(WARN) -fPIC -D_GNU_SOURCE -I. $(NL_CFLAGS) $(CFLAGS)
LDFLAGS_ALL := $(LDFLAGS)
ifeq ($(SAN),1)
CFLAGS_ALL += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS_ALL += -fsanitize=address,undefined
endif

YAML_LIBS := $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
LAUNCHER_LIBS := $(shell pkg-config --libs libseccomp json-c libnl-route-3.0 libnl-3.0 2>/dev/null || \
	echo -lseccomp -ljson-c -lnl-route-3 -lnl-3)
CURSES_LIBS := $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo)
# OpenSSL's libcrypto (EVP SHA-256 for `airlock diff`'s binary files), linked dynamically.
CRYPTO_LIBS := $(shell pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto)

# The image half of the policy engine: what the shim links (no libyaml, no allocation).
IMAGE_SRCS := policy/image.c policy/glob.c policy/regex.c policy/netaddr.c policy/names.c policy/cli.c
# The launcher half: YAML loading and compilation.
LOAD_SRCS := policy/load.c policy/load_tree.c policy/load_values.c policy/load_rules.c \
	policy/compile.c policy/pattern.c policy/default_text.c
POLICY_SRCS := $(IMAGE_SRCS) $(LOAD_SRCS)
POLICY_OBJS := $(POLICY_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/policy/default_policy.o
# What the shim and the launcher share (core/): the channel protocol, the canonicaliser.
CORE_SRCS := $(wildcard core/*.c)
# The preload shim: its hooks, the core and the image half of the policy engine, symbols hidden
# but the hooks.
SHIM_SRCS := $(wildcard preload/*.c)
SHIM_OBJS := $(SHIM_SRCS:%.c=$(BUILD)/shim/%.o) $(CORE_SRCS:%.c=$(BUILD)/shim/%.o) \
	$(IMAGE_SRCS:%.c=$(BUILD)/shim/%.o)
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/%.o)
# The egress proxy's parts (the launcher drives it with proxy_fd / proxy_dispatch).  Its event
# loop has one backend per platform (proxy/loop.h): epoll on Linux, poll(2) elsewhere or with
# PROXY_LOOP=poll.
OS := $(shell uname -s)
PROXY_LOOP ?= $(if $(filter Linux,$(OS)),epoll,poll)
PROXY_SRCS := $(filter-out proxy/loop_%.c,$(wildcard proxy/*.c)) proxy/loop_$(PROXY_LOOP).c
PROXY_OBJS := $(PROXY_SRCS:%.c=$(BUILD)/%.o)
SUPPORT_SRCS := $(wildcard tests/support/*.c)
SUPPORT_BINS := $(SUPPORT_SRCS:tests/support/%.c=$(BUILD)/tests/%)
# The airlock command, room by room: cli/ (the commands), sandbox/, approvals/, log/, suggest/.
LAUNCHER_SRCS := $(wildcard launcher/*/*.c)
LAUNCHER_OBJS := $(LAUNCHER_SRCS:%.c=$(BUILD)/%.o)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
# test_loop runs once per event loop backend this system has, whichever the proxy links.
LOOP_BACKENDS := $(if $(filter Linux,$(OS)),epoll poll,poll)
UNIT_BINS := $(filter-out %/test_loop,$(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)) \
	$(LOOP_BACKENDS:%=$(BUILD)/tests/test_loop_%)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)
BENCH_SRCS := $(wildcard tests/bench/*_bench.c)
BENCH_BINS := $(BENCH_SRCS:tests/bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps check unit-tests run-unit cli-tests shim-tests serve-tests run-tests proxy-tests tui-tests agents-tests corpus-tests check-asan fuzz fuzz-smoke bench demo clean

all: $(BUILD)/airlock $(BUILD)/libairlock-policy.a $(BUILD)/airlock-preload.so \
	$(BUILD)/libairlock-proxy.a $(BUILD)/airlock-landlock

deps:
	@scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# The built-in default policy is embedded verbatim with .incbin.
$(BUILD)/policy/default_policy.o: policy/default_policy.S policy/default_policy.yaml
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libairlock-policy.a: $(POLICY_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libairlock-core.a: $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libairlock-proxy.a: $(PROXY_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/shim/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=hidden -MMD -MP -c $< -o $@

$(BUILD)/airlock-preload.so: $(SHIM_OBJS)
	$(CC) -shared -o $@ $^ -Wl,-z,defs -Wl,-z,now $(LDFLAGS_ALL)

# The Landlock helper bwrap runs before the agent (landlock/airlock-landlock.c): static, so
# that no loader, library or LD_PRELOAD runs before its ruleset; no sanitizers (they need the
# loader).
$(BUILD)/airlock-landlock: landlock/airlock-landlock.c launcher/sandbox/landlock.h \
		launcher/checkpoint/filter.h core/fdpass.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(WARN) -D_GNU_SOURCE -I. -static -o $@ $< $(LDFLAGS)

# libyaml, libseccomp, json-c, libnl and ncurses are linked in statically: every `airlock run`
# starts a process, and loading three more shared objects was a quarter of the
# launcher's start-up.
$(BUILD)/airlock: $(LAUNCHER_OBJS) $(BUILD)/libairlock-policy.a $(BUILD)/libairlock-core.a \
		$(BUILD)/libairlock-proxy.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(LAUNCHER_OBJS) $(BUILD)/libairlock-proxy.a \
		$(BUILD)/libairlock-core.a \
		$(BUILD)/libairlock-policy.a -Wl,-Bstatic $(YAML_LIBS) $(LAUNCHER_LIBS) $(CURSES_LIBS) \
		-Wl,-Bdynamic $(CRYPTO_LIBS) -lpthread

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libairlock-policy.a $(BUILD)/libairlock-core.a \
		$(BUILD)/libairlock-proxy.a tests/unit/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/unit -o $@ $< $(BUILD)/libairlock-proxy.a \
		$(BUILD)/libairlock-core.a \
		$(BUILD)/libairlock-policy.a $(LDFLAGS_ALL) $(YAML_LIBS) $(CMOCKA_LIBS) \
		$(UNIT_EXTRA) -lpthread

$(BUILD)/tests/test_loop_%: tests/unit/test_loop.c $(BUILD)/proxy/loop_%.o tests/unit/testutil.h \
		$(BUILD)/libairlock-policy.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/unit -o $@ $< $(BUILD)/proxy/loop_$*.o $(BUILD)/libairlock-policy.a \
		$(LDFLAGS_ALL) $(YAML_LIBS) $(CMOCKA_LIBS) -lpthread

# Unit tests of launcher parts link those parts and their libraries.
$(BUILD)/tests/test_seccomp: launcher/sandbox/seccomp.c
$(BUILD)/tests/test_seccomp: UNIT_EXTRA := $(LAUNCHER_LIBS)
$(BUILD)/tests/test_audit: $(BUILD)/launcher/log/audit.o
$(BUILD)/tests/test_audit: UNIT_EXTRA := $(BUILD)/launcher/log/audit.o $(LAUNCHER_LIBS)
LOGREAD_OBJS := $(addprefix $(BUILD)/launcher/log/,logread.o audit.o)
$(BUILD)/tests/test_logread: $(LOGREAD_OBJS) tests/unit/said.h
$(BUILD)/tests/test_logread: UNIT_EXTRA := $(LOGREAD_OBJS) $(BUILD)/libairlock-core.a \
	$(BUILD)/libairlock-policy.a $(LAUNCHER_LIBS)
CKPT_OBJS := $(addprefix $(BUILD)/launcher/checkpoint/,journal.o store.o)
# The checkpoint reader (diff, undo, the catalog) on crafted stores.
CKPT_READER_OBJS := $(addprefix $(BUILD)/launcher/checkpoint/,journal.o store.o catalog.o undo.o diff.o)
$(BUILD)/tests/test_checkpoint_reader: $(CKPT_READER_OBJS)
$(BUILD)/tests/test_checkpoint_reader: UNIT_EXTRA := $(CKPT_READER_OBJS) $(BUILD)/libairlock-core.a \
	$(CRYPTO_LIBS)
# The checkpoint worker and undo end to end (a child under the filter, no sandbox).
CKPT_WORKER_OBJS := $(CKPT_READER_OBJS) $(BUILD)/launcher/checkpoint/supervise.o \
	$(BUILD)/launcher/profiles/profile.o
$(BUILD)/tests/test_checkpoint_worker: $(CKPT_WORKER_OBJS)
$(BUILD)/tests/test_checkpoint_worker: UNIT_EXTRA := $(CKPT_WORKER_OBJS) $(BUILD)/libairlock-core.a \
	$(BUILD)/libairlock-policy.a $(CRYPTO_LIBS) $(YAML_LIBS)
$(BUILD)/tests/test_log_summary: $(LOGREAD_OBJS) $(BUILD)/launcher/log/log_summary.o $(CKPT_OBJS) \
	tests/unit/said.h
$(BUILD)/tests/test_log_summary: UNIT_EXTRA := $(LOGREAD_OBJS) $(BUILD)/launcher/log/log_summary.o \
	$(CKPT_OBJS) \
	$(BUILD)/libairlock-core.a $(BUILD)/libairlock-policy.a $(LAUNCHER_LIBS)
$(BUILD)/tests/test_vterm: $(BUILD)/launcher/approvals/vterm.o
$(BUILD)/tests/test_vterm: UNIT_EXTRA := $(BUILD)/launcher/approvals/vterm.o
$(BUILD)/tests/test_profile: $(BUILD)/launcher/profiles/profile.o
$(BUILD)/tests/test_profile: UNIT_EXTRA := $(BUILD)/launcher/profiles/profile.o
# The sandbox builder: its setup operations, the mask walk, the environment, the bubblewrap
# backend (it finds bwrap with the core's program search, libairlock-core.a).
SANDBOX_OBJS := $(addprefix $(BUILD)/launcher/sandbox/,sandbox.o masks.o env.o bwrap.o)
$(BUILD)/tests/test_sandbox $(BUILD)/tests/test_sandbox_run: $(SANDBOX_OBJS) tests/unit/sandbox_fixture.h
# The session's hub as `airlock run` wires it: the control socket, the approvals, the log.
HUB_OBJS := $(addprefix $(BUILD)/launcher/,approvals/control.o approvals/control_client.o \
	approvals/control_lines.o approvals/hub.o approvals/flood.o \
	approvals/approve.o approvals/events.o approvals/prompt.o approvals/redecide.o \
	log/audit.o)
$(BUILD)/tests/test_control $(BUILD)/tests/test_flood $(BUILD)/tests/test_approve: $(HUB_OBJS) tests/unit/hub_fixture.h
$(BUILD)/tests/test_control $(BUILD)/tests/test_flood $(BUILD)/tests/test_approve: UNIT_EXTRA := $(HUB_OBJS) \
	$(BUILD)/libairlock-proxy.a $(BUILD)/libairlock-core.a $(BUILD)/libairlock-policy.a \
	$(LAUNCHER_LIBS)
$(BUILD)/tests/test_netns: $(BUILD)/launcher/sandbox/netns.o $(BUILD)/launcher/sandbox/agent_tty.o
$(BUILD)/tests/test_netns: UNIT_EXTRA := $(BUILD)/launcher/sandbox/netns.o $(BUILD)/launcher/sandbox/agent_tty.o \
	$(LAUNCHER_LIBS) $(CURSES_LIBS)
$(BUILD)/tests/test_sandbox $(BUILD)/tests/test_sandbox_run: UNIT_EXTRA := $(SANDBOX_OBJS) $(BUILD)/libairlock-core.a \
	$(LAUNCHER_LIBS)
# The PATH search against execvp(3) and the launcher's canon_program() (the shim's is the same search).
$(BUILD)/tests/test_pathsearch: $(BUILD)/launcher/cli/program.o
$(BUILD)/tests/test_pathsearch: UNIT_EXTRA := $(BUILD)/launcher/cli/program.o $(BUILD)/libairlock-core.a
# The policies test_decide and test_describe share.
$(BUILD)/tests/test_decide $(BUILD)/tests/test_describe: tests/unit/decide_policies.h
# The DNS messages test_dns and test_dns_parse build and read.
$(BUILD)/tests/test_dns $(BUILD)/tests/test_dns_parse: tests/unit/dns_wire.h
# The regex table test_regex checks and test_regex_program compiles.
$(BUILD)/tests/test_regex $(BUILD)/tests/test_regex_program: tests/unit/regex_cases.h

# Test helpers that play other parts (the launcher's channel server, an image compiler).
$(BUILD)/tests/%: tests/support/%.c $(BUILD)/libairlock-policy.a $(BUILD)/libairlock-core.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libairlock-core.a $(BUILD)/libairlock-policy.a \
		$(LDFLAGS_ALL) $(YAML_LIBS)

unit-tests: $(UNIT_BINS) $(SUPPORT_BINS)

run-unit: unit-tests
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

cli-tests: all
	@tests/cli/run.sh $(BUILD)/airlock
	@tests/cli/log.sh $(BUILD)/airlock
	@tests/cli/suggest.sh $(BUILD)/airlock
	@tests/cli/undo.sh $(BUILD)/airlock

# airlock serve and airlock env: unrelated process trees joining one session through the shim,
# and a podman container joining it through a bind mount (skips loudly where podman cannot run).
serve-tests: all
	@tests/serve/run.sh $(BUILD)
	@tests/serve/container.sh $(BUILD)

# airlock run on real programs, as root and as an unprivileged user.
run-tests: all unit-tests
	@tests/run/run.sh $(BUILD)
	@tests/run/hostile.sh $(BUILD)

# The egress proxy end to end: curl, python, node, git, a static binary against a lab
# "internet" in network namespaces the test makes (no packet leaves the machine).
proxy-tests: all unit-tests
	@tests/proxy/run.sh $(BUILD)

# The preload shim on real programs (sh, bash, python3, perl, node, coreutils, a fortified C program),
# then CPython's own os/subprocess/posix/fileio tests with and without it.
shim-tests: all unit-tests
	@tests/shim/run.sh $(BUILD)
	@tests/shim/cpython.sh $(BUILD)

# The approval TUI in tmux: against a fake session, then real `airlock run` and `attach`.
tui-tests: all
	@tests/tui/run.sh $(BUILD)

# Real agent CLIs (Claude Code, Codex; scripts/deps.sh installs them) driven by mock model APIs
# through scripted sessions, bare and under airlock run --headless, in network namespaces the
# test makes (no packet leaves the machine); root only, skipped loudly otherwise.
agents-tests: all
	@tests/agents/run.sh $(BUILD)

# Real agents' commands (public trajectories) bare and under airlock run --headless with the
# default policy, outcomes compared; dangerous actions from incident reports do no harm.
corpus-tests: all
	@tests/corpus/run.sh $(BUILD)

# The unit tests, and the TUI against the fake session, under ASan+UBSan.
check-asan:
	@$(MAKE) --no-print-directory BUILD=build/asan SAN=1 OPT=-O1 run-unit \
		$(addprefix build/asan/launcher/approvals/,tui.o tui_model.o tui_draw.o tui_keys.o vterm.o) \
		build/asan/core/termtext.o
	@NO_REAL=1 tests/tui/run.sh build/asan

check: deps
	@$(MAKE) --no-print-directory all unit-tests
	@$(MAKE) --no-print-directory run-unit
	@$(MAKE) --no-print-directory cli-tests
	@$(MAKE) --no-print-directory shim-tests
	@$(MAKE) --no-print-directory serve-tests
	@$(MAKE) --no-print-directory run-tests
	@$(MAKE) --no-print-directory proxy-tests
	@$(MAKE) --no-print-directory tui-tests
	@$(MAKE) --no-print-directory agents-tests
	@$(MAKE) --no-print-directory corpus-tests
	@$(MAKE) --no-print-directory check-asan
	@$(MAKE) --no-print-directory fuzz-smoke
	@echo "make check: all tests passed"

# ---- fuzzing (libFuzzer, clang) --------------------------------------------
FUZZ_CFLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE -I. -Wall -Wextra -Werror \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

$(BUILD)/fuzz/%: tests/fuzz/%.c $(POLICY_SRCS) $(CORE_SRCS) $(PROXY_SRCS) \
		policy/default_policy.S policy/default_policy.yaml
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(POLICY_SRCS) $(CORE_SRCS) $(PROXY_SRCS) \
		policy/default_policy.S $(FUZZ_EXTRA) $(YAML_LIBS)

# The control socket and the channel server, wired as the launcher wires them (launcher/approvals/hub.h).
FUZZ_HUB_SRCS := $(addprefix launcher/,approvals/control.c approvals/control_lines.c \
	approvals/hub.c approvals/flood.c \
	approvals/approve.c approvals/events.c approvals/prompt.c approvals/redecide.c \
	log/audit.c)
$(BUILD)/fuzz/fuzz_control $(BUILD)/fuzz/fuzz_approve: $(FUZZ_HUB_SRCS) $(wildcard launcher/*/*.h) \
	tests/fuzz/fuzz_hub.h
$(BUILD)/fuzz/fuzz_control $(BUILD)/fuzz/fuzz_approve: FUZZ_EXTRA := $(FUZZ_HUB_SRCS) -ljson-c

fuzz-smoke: $(FUZZ_BINS)
	@set -e; for f in $(FUZZ_BINS); do n=$$(basename $$f); \
		mkdir -p $(BUILD)/fuzz/corpus-$$n; \
		echo "== fuzz smoke $$n ($(FUZZ_SMOKE_TIME)s)"; \
		$$f -max_total_time=$(FUZZ_SMOKE_TIME) -print_final_stats=0 \
			$(BUILD)/fuzz/corpus-$$n tests/fuzz/seeds/$$n 2>$(BUILD)/fuzz/$$n.log \
			|| { tail -50 $(BUILD)/fuzz/$$n.log; exit 1; }; \
		grep -E '^(#[0-9]+.*DONE|Done)' $(BUILD)/fuzz/$$n.log | tail -1; done

fuzz: $(FUZZ_BINS)
	@set -e; for f in $(FUZZ_BINS); do n=$$(basename $$f); \
		mkdir -p $(BUILD)/fuzz/corpus-$$n; \
		echo "== fuzz $$n ($(FUZZ_RUNS) runs, at most $(FUZZ_TIME)s)"; \
		$$f -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
			$(BUILD)/fuzz/corpus-$$n tests/fuzz/seeds/$$n 2>$(BUILD)/fuzz/$$n.log \
			|| { tail -50 $(BUILD)/fuzz/$$n.log; exit 1; }; \
		grep -E '^(Done|stat::number_of_executed_units)' $(BUILD)/fuzz/$$n.log; done

# ---- benchmarks -------------------------------------------------------------
$(BUILD)/bench/%: tests/bench/%.c tests/bench/bench_time.h $(BUILD)/libairlock-policy.a \
		$(BUILD)/libairlock-core.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -O2 -o $@ $< $(BUILD)/libairlock-core.a $(BUILD)/libairlock-policy.a \
		$(LDFLAGS_ALL) $(YAML_LIBS) -lpthread

$(BUILD)/bench/shim_loop: tests/bench/shim_loop.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -O2 -o $@ $< $(LDFLAGS_ALL)

bench: deps all unit-tests $(BENCH_BINS) $(BUILD)/bench/shim_loop
	@set -e; for b in $(BENCH_BINS); do $$b; done
	@set -e; for b in tests/bench/*_bench.sh; do $$b $(BUILD); done

# ---- demo ---------------------------------------------------------------------
demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(BUILD)/airlock

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
