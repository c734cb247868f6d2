# berth build: library (build/libberth.a), CLI (build/berth), tests, benchmarks.
# `make` builds; `make demo` and `make check` are the README's quick start.

CC      ?= cc
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wno-missing-field-initializers
OPT     ?= -O2 -g
PKGLIBS := -lyaml -ljansson -lmicrohttpd -lsqlite3 -lcurl -lsodium -lpthread -lm
BUILD   ?= build
INC     := -Iinclude -Isrc

LIB_SRC := $(sort $(wildcard src/core/*.c src/io/*.c src/model/*.c src/pipeline/*.c \
                             src/nexus/*.c src/fleet/*.c src/k8s/*.c src/kube/*.c src/autoscale/*.c \
                             src/disrupt/*.c src/serve/*.c src/report/*.c src/crosslayer/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
HDRS := $(wildcard include/berth/*.h src/*/*.h)
TEST_HDRS := $(wildcard tests/unit/*.h) tests/hostile_names.h

CFLAGS_ALL = $(CSTD) $(WARN) $(OPT) $(INC) $(EXTRA_CFLAGS)

# Builds run in parallel, one job per processor, unless the caller gave -j.
# Each rule prints a short progress line ("CC src/kube/sched.c"); V=1 prints
# the full command line instead.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(filter -j% --jobserver%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(JOBS)
endif
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-4s %s\n' $(1) $(2)
endif

# `berth version`: the release and the build (git describe, when this is a checkout)
BERTH_BUILD_ID := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
$(BUILD)/obj/src/cli/main.o: EXTRA_CFLAGS += -DBERTH_BUILD='"$(BERTH_BUILD_ID)"'


.PHONY: all deps demo check test tsan bench clean install examples-check torture
# `make` on a fresh machine installs the missing Debian packages first
# (scripts/deps.sh) or stops with one line naming the command to run.
all: deps
	@$(MAKE) --no-print-directory $(BUILD)/berth

$(BUILD)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libberth.a: $(LIB_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(BUILD)/berth: $(CLI_OBJ) $(BUILD)/libberth.a
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libberth.a $(PKGLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libberth.a $(HDRS) $(TEST_HDRS)
	@mkdir -p $(dir $@)
	$(call say,CCLD,$@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libberth.a $(PKGLIBS) -lcmocka

$(BUILD)/bench/%: bench/%.c $(BUILD)/libberth.a $(HDRS) $(wildcard bench/*.h) tests/hostile_names.h
	@mkdir -p $(dir $@)
	$(call say,CCLD,$@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libberth.a $(PKGLIBS)

deps:
	@scripts/deps.sh

# ---- failure injection (docs/testing.md) ----
# The torture binaries are the CLI and tests/torture/torture.c linked with
# tests/torture/fail_alloc.c, whose wrappers fail the Nth allocation
# (BERTH_FAIL_AT=N). `make check` runs a sample (tests/scenarios/torture.sh),
# `make torture` every N over the whole corpus.
TORTURE_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup
TORTURE_BIN  := $(BUILD)/torture/berth $(BUILD)/torture/torture
TORTURE_OPT  := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

$(BUILD)/torture/berth: $(CLI_OBJ) $(BUILD)/obj/tests/torture/fail_alloc.o $(BUILD)/libberth.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(TORTURE_WRAP) -o $@ $(CLI_OBJ) $(BUILD)/obj/tests/torture/fail_alloc.o $(BUILD)/libberth.a $(PKGLIBS)

$(BUILD)/torture/torture: tests/torture/torture.c tests/torture/torture.h $(BUILD)/obj/tests/torture/fail_alloc.o $(BUILD)/libberth.a $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(TORTURE_WRAP) -o $@ $< $(BUILD)/obj/tests/torture/fail_alloc.o $(BUILD)/libberth.a $(PKGLIBS)

torture: deps
	@$(MAKE) --no-print-directory BUILD=build/asan OPT="$(TORTURE_OPT)" \
	  build/asan/berth build/asan/torture/berth build/asan/torture/torture
	@BUILD=build/asan scripts/torture.sh all

# README command 1: build and run the seed scenarios.
demo: deps
	@$(MAKE) --no-print-directory all
	./$(BUILD)/berth simulate examples/nexus/seed-scenarios.yaml --svg $(BUILD)/seed-layout.svg --html $(BUILD)/seed-layout.html; \
	  rc=$$?; echo; echo "layout picture written to $(BUILD)/seed-layout.svg and $(BUILD)/seed-layout.html"; exit $$rc

# README command 2: build with ASan+UBSan and run every test. The ASan
# build (build/asan: the CLI, the unit tests, the torture binaries) and the
# TSan build (build/tsan/berth) run side by side (check-build), then
# scripts/run-tests.sh runs the unit tests, the scenarios and the TSan
# scripts together, one per processor, longest first (docs/testing.md).
ASAN_OPT := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
check: deps
	@$(MAKE) --no-print-directory check-build
	@BUILD=build/asan TSAN_BUILD=build/tsan TSAN_SCRIPTS="$(TSAN_SCRIPTS)" scripts/run-tests.sh

.PHONY: check-build check-build-asan check-build-tsan
check-build: check-build-asan check-build-tsan
check-build-asan:
	@$(MAKE) --no-print-directory BUILD=build/asan OPT="$(ASAN_OPT)" \
	  build/asan/berth $(TEST_SRC:tests/unit/%.c=build/asan/tests/%) $(TORTURE_BIN:$(BUILD)/%=build/asan/%)
check-build-tsan:
	@$(MAKE) --no-print-directory BUILD=build/tsan OPT="$(TSAN_OPT)" build/tsan/berth

test: check

# ThreadSanitizer: the CLI and the service built with -fsanitize=thread
# (build/tsan), then concurrent requests to every stateless and estate
# endpoint (tests/tsan/serve_concurrent.sh), and kube schedule's worker
# threads (tests/tsan/kube_threads.sh) and disrupt plan's what-if session
# threads (tests/tsan/disrupt_threads.sh), autoscale plan's and simulate's
# (tests/tsan/autoscale_threads.sh); any report fails.
TSAN_OPT := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
TSAN_SCRIPTS := tests/tsan/serve_concurrent.sh tests/tsan/kube_threads.sh \
                tests/tsan/disrupt_threads.sh tests/tsan/autoscale_threads.sh
tsan: deps
	@$(MAKE) --no-print-directory BUILD=build/tsan OPT="$(TSAN_OPT)" build/tsan/berth
	@for s in $(TSAN_SCRIPTS); do BERTH=build/tsan/berth $$s || exit 1; done

bench: deps
	@$(MAKE) --no-print-directory OPT="-O2 -march=native -g" BUILD=build/bench-build \
	  $(BENCH_SRC:bench/%.c=build/bench-build/bench/%) build/bench-build/berth
	@for b in $(BENCH_SRC:bench/%.c=build/bench-build/bench/%); do ./$$b || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/berth $(DESTDIR)$(PREFIX)/bin/berth

PREFIX ?= /usr/local

clean:
	rm -rf build

# ---- fuzzing (docs/fuzzing.md) ----
# `make fuzz` builds each fuzz/fuzz_*.c with libFuzzer, ASan and UBSan
# against the library compiled with the same flags (build/fuzz), then runs
# each for FUZZ_SECONDS over its seed corpus (fuzz/corpus/NAME/, read
# only; new inputs go to build/fuzz/corpus/NAME/). Crashes are written to
# build/fuzz/crash-* and fail the target.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_FLAGS   ?=
FUZZ_BUILD   := build/fuzz
FUZZ_SAN     := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer -g -O1
FUZZ_SRC     := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN     := $(FUZZ_SRC:fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_LIB_SRC := $(LIB_SRC)
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)

.PHONY: fuzz fuzz-build
.SECONDARY: $(FUZZ_LIB_OBJ)
fuzz-build: $(FUZZ_BIN)

$(FUZZ_BUILD)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(WARN) $(INC) $(FUZZ_SAN) -c $< -o $@

$(FUZZ_BUILD)/%: fuzz/%.c fuzz/fuzz_common.h $(FUZZ_LIB_OBJ) $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(WARN) $(INC) $(FUZZ_SAN) -o $@ $< $(FUZZ_LIB_OBJ) $(PKGLIBS)

fuzz: $(FUZZ_BIN)
	@set -e; for b in $(FUZZ_BIN); do \
	  n=$$(basename $$b); c=$${n#fuzz_}; \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$c; \
	  echo "== $$n: $(FUZZ_SECONDS) s over fuzz/corpus/$$c"; \
	  $$b -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/crash-$$c- $(FUZZ_FLAGS) \
	    $(FUZZ_BUILD)/corpus/$$c fuzz/corpus/$$c || { echo "FUZZ FAILED: $$n (see $(FUZZ_BUILD)/crash-$$c-*)"; exit 1; }; \
	done; echo "fuzz: no crash"
