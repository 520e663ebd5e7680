# rec: a flight recorder for C services.
#
#   make                 build the library, the tools and the example service
#   make test            build and run every test (unit, CLI, golden, integration)
#   make test-asan       the same suite built with -fsanitize=address,undefined
#   make test-valgrind   the same suite under valgrind memcheck, leaks included
#   make testdata        regenerate testdata/ recordings (deterministic) and expected outputs
#   make install PREFIX=/usr/local
#   make demo            the README's main command
#
# Builds go to $(BUILD) (default build/); V=1 shows commands.  Missing Debian
# packages are installed with apt-get on first use (as root).

BUILD ?= build
PREFIX ?= /usr/local
CC ?= cc
SAN ?=

VERSION := $(shell sed -n 's/^\#define REC_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' libfmt/include/rec/rec.h | paste -sd.)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKGS := libzstd liblz4 zlib
# Debian packages: what building the library, the tools and the example needs
# (make, make demo), and what only the tests need (make test adds them).
DEB_PKGS := libzstd-dev liblz4-dev libgraphviz-dev pkg-config libsqlite3-dev zlib1g-dev
TEST_DEB_PKGS := libcmocka-dev zstd
# libdw (elfutils): symbol tables, DWARF lines and inline frames of stack frames (stack_symbol_dwarf.c)
PKGS += libdw
DEB_PKGS += libdw-dev
DEPS_STAMP := $(BUILD)/.deps-ok
TEST_DEPS_STAMP := $(BUILD)/.deps-test-ok

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla
HARDEN := -fstack-protector-strong -fstack-clash-protection
# _FORTIFY_SOURCE=3 (bounds from __builtin_dynamic_object_size: also heap
# buffers of run-time size) needs glibc >= 2.34 and GCC >= 12 or Clang >= 9;
# glibc silently treats 3 as 2 otherwise, so the probe asks glibc which level
# it applied and falls back to 2 where 3 is not available.  Debian 12 (glibc
# 2.36, gcc 12.2, clang 14) gets 3 with both compilers.  -U first: some
# compilers predefine _FORTIFY_SOURCE.  Not with SAN=1 (ASan checks bounds).
FORTIFY_PROBE := printf '\043include <stdio.h>\n\043if __USE_FORTIFY_LEVEL < 3\n\043error no level 3\n\043endif\n' | \
	$(CC) -O2 -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3 -Werror -fsyntax-only -x c - >/dev/null 2>&1
ifeq ($(SAN),1)
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
else
FORTIFY_LEVEL := $(shell $(FORTIFY_PROBE) && echo 3 || echo 2)
OPT := -O2 -g -fno-omit-frame-pointer -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=$(FORTIFY_LEVEL)
LDSAN :=
endif

CPPFLAGS_ALL := -Ilibfmt/include -Ilibfmt -D_GNU_SOURCE $(CPPFLAGS)
CFLAGS_ALL := -std=c17 $(WARN) $(HARDEN) $(OPT) -fPIC -pthread $(CFLAGS)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LIBS_ALL = $(PKG_LIBS) -pthread -lm -ldl $(LDSAN) $(LDFLAGS)

LIB_SRCS := $(sort $(wildcard libfmt/common/*.c libfmt/write/*.c libfmt/read/*.c libfmt/record/*.c libfmt/analysis/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_SRCS := $(sort $(wildcard tools/common/*.c))
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
TOOL_SRCS := $(sort $(wildcard tools/rec-*.c))
TOOLS := $(TOOL_SRCS:tools/%.c=$(BUILD)/bin/%)
# Unit tests mirror the library's layers: tests/unit/LAYER/test_MODULE.c
# (common, write, read, record, analysis, tools); a test file still at
# tests/unit/test_*.c is built too.  Every binary is $(BUILD)/tests/test_NAME
# (tests/run.sh runs $(BUILD)/tests/test_*), so two test files may not share
# a name across folders.
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c tests/unit/*/test_*.c))
UNITS := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(UNIT_SRCS))))
ifneq ($(words $(UNITS)),$(words $(sort $(UNITS))))
$(error two unit test files share a name: $(UNIT_SRCS))
endif
TESTLIB_SRCS := $(sort $(wildcard tests/lib/*.c))
TESTLIB_OBJS := $(TESTLIB_SRCS:%.c=$(BUILD)/obj/%.o)
HELPER_SRCS := $(sort $(wildcard tests/helpers/*.c))
HELPERS := $(HELPER_SRCS:tests/helpers/%.c=$(BUILD)/tests/%)
EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLES := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/bin/%)

STATIC := $(BUILD)/lib/librec.a
SHARED := $(BUILD)/lib/librec.so.$(VERSION)

.SECONDARY:
.PHONY: all deps test-deps test test-asan check testdata install clean demo bench bench-quick
all: $(STATIC) $(SHARED) $(TOOLS) $(EXAMPLES)

# ---- dependencies: install what is missing, once ---------------------------
deps: $(DEPS_STAMP)
# The check and the installer are found on PATH (tests/cli/deps.sh puts stubs
# of dpkg-query, id and apt-get there); the log goes into $(BUILD), made first.
$(DEPS_STAMP):
	$(Q)mkdir -p $(BUILD); missing=""; \
	for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "error: need root to apt-get install$$missing" >&2; exit 1; fi; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >$(BUILD)/.apt.log 2>&1 || { cat $(BUILD)/.apt.log >&2; exit 1; }; \
	fi
	$(Q)touch $@

$(BUILD)/obj/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

# The unit tests need cmocka, and the test scripts the zstd program: make test
# installs them (a sub-make of the deps rule, as for lint and valgrind below);
# make and make demo do not.
ifneq ($(REC_EXTRA_DEPS),1)
$(TEST_DEPS_STAMP): | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory deps REC_EXTRA_DEPS=1 DEB_PKGS="$(TEST_DEB_PKGS)" DEPS_STAMP=$@
endif
$(UNIT_SRCS:%.c=$(BUILD)/obj/%.o): | $(TEST_DEPS_STAMP)
test-deps: $(TEST_DEPS_STAMP)

$(BUILD)/obj/libfmt/%.o: CFLAGS_ALL += -fvisibility=hidden -DREC_BUILDING_LIBRARY
# librec's code is one named section, rec_text, so that it is one known range
# in any program (statically linked or as librec.so): the linker defines
# __start_rec_text/__stop_rec_text, and stack capture drops the recorder's own
# leading frames by address (libfmt/record/stack_capture.c).  Every code
# section the compiler emits (.text, and the .text.unlikely/.text.startup/
# .text.hot parts gcc splits functions into) is renamed; tests/cli/stacks_no_rec.sh
# checks with readelf and nm that every function of librec.a lies inside.
OBJCOPY ?= objcopy
READELF ?= readelf
REC_TEXT_RENAMES = $$($(READELF) -SW $(1) | sed -n 's/^ *\[ *[0-9]*\] \(\.text[^ ]*\) .*/--rename-section \1=rec_text/p' | sort -u)
$(BUILD)/obj/libfmt/%.o: libfmt/%.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(PKG_CFLAGS) -MMD -MP -MT $@ -MF $(@:.o=.d) -c $< -o $@.tmp
	$(Q)$(OBJCOPY) $(call REC_TEXT_RENAMES,$@.tmp) $@.tmp $@ && rm -f $@.tmp
# The recorder's thread-local buffers use the initial-exec TLS model (measured: ~5 ns/event cheaper).
$(BUILD)/obj/libfmt/record/%.o: CFLAGS_ALL += -ftls-model=initial-exec

$(STATIC): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(SHARED): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,librec.so.$(SOVERSION) -o $@ $^ $(LIBS_ALL)
	$(Q)ln -sf librec.so.$(VERSION) $(BUILD)/lib/librec.so.$(SOVERSION) && ln -sf librec.so.$(VERSION) $(BUILD)/lib/librec.so

$(BUILD)/bin/%: $(BUILD)/obj/tools/%.o $(CLI_OBJS) $(STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(TOOL_OBJS_$*) $(CLI_OBJS) $(STATIC) $(LIBS_ALL)

# Only rec-lockgraph, rec-report (its HTML page's wait-for graph) and the test
# helper rec_test_agread draw with Graphviz: tools/graphviz/ (the lock graphs)
# is linked into the two tools, tools/report/ (the HTML page) into rec-report.
# (= not :=: pkg-config and Graphviz may be installed by the deps rule after the Makefile is read)
GV_LIBS = $(shell pkg-config --libs libcgraph libgvc 2>/dev/null)
GV_SRCS := $(sort $(wildcard tools/graphviz/*.c))
GV_OBJS := $(GV_SRCS:%.c=$(BUILD)/obj/%.o)
REPORT_SRCS := $(sort $(wildcard tools/report/*.c))
REPORT_OBJS := $(REPORT_SRCS:%.c=$(BUILD)/obj/%.o)
TOOL_OBJS_rec-lockgraph := $(GV_OBJS)
TOOL_OBJS_rec-report := $(REPORT_OBJS) $(GV_OBJS)
$(BUILD)/bin/rec-lockgraph: $(GV_OBJS)
$(BUILD)/bin/rec-report: $(REPORT_OBJS) $(GV_OBJS)
$(BUILD)/bin/rec-lockgraph $(BUILD)/bin/rec-report $(BUILD)/tests/rec_test_agread: LIBS_ALL += $(GV_LIBS)

# rec-view --sql prints the SQL of its views: spec/views/VIEW.sql (and
# VIEW.by.sql with --by), the one copy, compiled into rec-view as C strings
# (an entry per file: the view, whether it is the --by form, the text).
VIEW_SQL := $(sort $(wildcard spec/views/*.sql))
$(BUILD)/gen/view_sql.h: $(VIEW_SQL) Makefile
	@mkdir -p $(dir $@)
	$(Q)for f in $(VIEW_SQL); do b=$$(basename $$f .sql); by=0; \
	  case $$b in *.by) by=1; b=$${b%.by};; esac; \
	  printf '{ "%s", %s,\n' "$$b" "$$by"; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/  "/' -e 's/$$/\\n"/' $$f; echo '},'; \
	done >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/tools/rec-view.o: $(BUILD)/gen/view_sql.h
$(BUILD)/obj/tools/rec-view.o: CPPFLAGS_ALL += -I$(BUILD)/gen

# rec-sql links its parts (tools/sql/: schema, virtual tables, output) and SQLite.
SQL_SRCS := $(sort $(wildcard tools/sql/*.c))
SQL_OBJS := $(SQL_SRCS:%.c=$(BUILD)/obj/%.o)
$(BUILD)/bin/rec-sql: $(BUILD)/obj/tools/rec-sql.o $(SQL_OBJS) $(CLI_OBJS) $(STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(SQL_OBJS) $(CLI_OBJS) $(STATIC) $(LIBS_ALL) $(shell pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)

# rec-export links rec-sql's parts (its rows are rec-sql's virtual tables)
# and tools/export/ (the Parquet writer, its Thrift encoder, the dataset).
EXPORT_SRCS := $(sort $(wildcard tools/export/*.c))
EXPORT_OBJS := $(EXPORT_SRCS:%.c=$(BUILD)/obj/%.o)
# --format pprof is rec-flame's rec_flame_run(): rec-flame.c without its main().
EXPORT_OBJS += $(BUILD)/obj/fuzz/tools/rec-flame.o
$(BUILD)/bin/rec-export: $(BUILD)/obj/tools/rec-export.o $(EXPORT_OBJS) $(SQL_OBJS) $(CLI_OBJS) $(STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(EXPORT_OBJS) $(SQL_OBJS) $(CLI_OBJS) $(STATIC) $(LIBS_ALL) $(shell pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)

# test_parquet tests the Parquet writer and its Thrift encoder alone.
PARQUET_OBJS := $(BUILD)/obj/tools/export/parquet.o $(BUILD)/obj/tools/export/thrift_compact.o
$(BUILD)/tests/test_parquet: $(PARQUET_OBJS)

# rec-record (issue 18) checks its options with the recorder's own parser,
# whose objects in librec.a clash with the tools' fast buffer (rec_out_*):
# it links the shared library, which exports only the API, found through
# $ORIGIN/../lib (build/bin -> build/lib, PREFIX/bin -> PREFIX/lib).
$(BUILD)/bin/rec-record: $(BUILD)/obj/tools/rec-record.o $(CLI_OBJS) $(SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(CLI_OBJS) -L$(BUILD)/lib -l:librec.so.$(VERSION) -Wl,-rpath,'$$ORIGIN/../lib' $(LIBS_ALL)

# requestwatch-plain (issue 18): the example service from the same source
# with plain pthread, nanosleep and malloc calls and without librec, for
# rec-record and the preload library to record unmodified.
$(BUILD)/bin/requestwatch-plain: examples/requestwatch.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@ (plain)")
	$(Q)$(CC) -D_GNU_SOURCE -DREQUESTWATCH_PLAIN $(CFLAGS_ALL) -o $@ $< -pthread $(LDSAN) $(LDFLAGS)
all: $(BUILD)/bin/requestwatch-plain

# The preload library (issue 18, libfmt/preload/): the recorder and the
# interposers of malloc & co., pthread locks, condition waits, sleeps and
# threads, for programs that do not link librec (LD_PRELOAD; rec-record).
PRELOAD_SRCS := $(sort $(wildcard libfmt/preload/*.c))
PRELOAD_OBJS := $(PRELOAD_SRCS:%.c=$(BUILD)/obj/%.o)
PRELOAD := $(BUILD)/lib/librec-preload.so
$(BUILD)/obj/libfmt/preload/%.o: CFLAGS_ALL += -ftls-model=initial-exec
$(PRELOAD): $(PRELOAD_OBJS) $(LIB_OBJS) libfmt/preload/preload.map libfmt/preload/preload.dynlist
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,--dynamic-list=libfmt/preload/preload.dynlist \
	    -Wl,--version-script=libfmt/preload/preload.map -o $@ $(PRELOAD_OBJS) $(LIB_OBJS) $(LIBS_ALL)
all: $(PRELOAD)
# Test programs that know nothing of rec (tests/helpers/plain_*.c), built
# without librec, for the preload library's tests.
$(BUILD)/tests/plain_%: $(BUILD)/obj/tests/helpers/plain_%.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -pthread -ldl $(LDSAN) $(LDFLAGS)

$(BUILD)/bin/%: $(BUILD)/obj/examples/%.o $(STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -rdynamic -o $@ $< $(STATIC) $(LIBS_ALL)

# A unit test links its own object (first), the objects a rule below adds
# for it (prerequisites only), the test support of tests/lib and the library.
define unit_test_rule
$(BUILD)/tests/$(basename $(notdir $(1))): $(BUILD)/obj/$(1:.c=.o) $$(TESTLIB_OBJS) $$(STATIC)
endef
$(foreach s,$(UNIT_SRCS),$(eval $(call unit_test_rule,$(s))))
# test_stack_unwind.c is built without frame pointers: the CFI walk goes through it.
$(BUILD)/obj/tests/unit/record/test_stack_unwind.o: CFLAGS_ALL += -fomit-frame-pointer
$(UNITS):
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -rdynamic -o $@ $(filter %/$(@F).o,$^) $(filter-out %/$(@F).o $(TESTLIB_OBJS),$(filter %.o,$^)) $(TESTLIB_OBJS) $(STATIC) $(LIBS_ALL) -lcmocka

# test_tools calls the archive tools' run functions (tools.h): their code
# without main(), as the fuzzing harnesses link it (rule below).
TEST_TOOLS_OBJS := $(foreach t,cat check recover scrub split summary symbolize,$(BUILD)/obj/fuzz/tools/rec-$(t).o)
$(BUILD)/tests/test_tools: $(TEST_TOOLS_OBJS) $(CLI_OBJS)
# test_out: the tools' output buffer and JSON strings (tools/common).
$(BUILD)/tests/test_out: $(CLI_OBJS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/helpers/%.o $(TESTLIB_OBJS) $(STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -rdynamic -o $@ $< $(TESTLIB_OBJS) $(STATIC) $(LIBS_ALL)

# The example service linked against librec.so (tests/cli/stacks_no_rec.sh:
# librec's frames are dropped there as in the static link).
$(BUILD)/tests/requestwatch-shared: $(BUILD)/obj/examples/requestwatch.o $(SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -rdynamic -o $@ $< -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) -lrec $(LIBS_ALL)

# ---- tests ----------------------------------------------------------------
test check: all $(UNITS) $(HELPERS) $(BUILD)/tests/requestwatch-shared $(TEST_DEPS_STAMP)
	$(Q)BUILD=$(BUILD) SAN=$(SAN) bash tests/run.sh

test-asan:
	$(Q)$(MAKE) --no-print-directory test BUILD=build-asan SAN=1

# Deterministic golden recordings and the tools' expected output on them.
testdata: all $(HELPERS)
	$(Q)BUILD=$(BUILD) bash tests/make_testdata.sh

# ---- install ----------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/include/rec $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 libfmt/include/rec/*.h $(DESTDIR)$(PREFIX)/include/rec/
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/
	ln -sf librec.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/librec.so.$(SOVERSION)
	ln -sf librec.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/librec.so
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -d $(DESTDIR)$(PREFIX)/lib/rec
	install -m 755 $(PRELOAD) $(DESTDIR)$(PREFIX)/lib/rec/librec-preload.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@LIBS@|$(shell pkg-config --static --libs $(PKGS) 2>/dev/null) -pthread -lm -ldl|' \
	    librec.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/rec.pc

demo: all
	$(Q)BUILD=$(BUILD) bash examples/demo.sh

bench: all
	$(Q)BUILD=$(BUILD) bash bench/run.sh

bench-quick: all
	$(Q)BUILD=$(BUILD) bash bench/run.sh --quick

clean:
	rm -rf $(BUILD) build-asan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ==== fuzzing, replay and static analysis (issue 6) =========================
# Block owned by the fuzzing work; see fuzz/README.md.
#   make fuzz [FUZZ_SECONDS=60]   each libFuzzer harness in turn (clang)
#   make fuzz-smoke               each harness FUZZ_SMOKE_SECONDS (12) s (CI)
#   make lint                     cppcheck and clang-tidy over libfmt/ and tools/
# make test also replays fuzz/corpus/<h> and testdata/fuzz-regressions/<h>
# through $(BUILD)/fuzz/<h>_replay (the harness + fuzz/regression_driver.c,
# built with $(CC); tests/cli/fuzz_replay.sh runs them).
FUZZ_SECONDS ?= 60
# 13 harnesses x 12 s + the clang build: about 4-5 minutes (fuzz/README.md).
FUZZ_SMOKE_SECONDS ?= 12
FUZZ_BUILD ?= $(BUILD)/fuzz-libfuzzer
FUZZ_HARNESS_NAMES := $(sort $(basename $(notdir $(filter-out fuzz/regression_driver.c,$(wildcard fuzz/*.c)))))
FUZZ_REPLAYS := $(FUZZ_HARNESS_NAMES:%=$(BUILD)/fuzz/%_replay)
LINT_SRCS = $(LIB_SRCS) $(CLI_SRCS) $(TOOL_SRCS) $(SQL_SRCS) $(GV_SRCS) $(REPORT_SRCS) $(EXPORT_SRCS) $(PRELOAD_SRCS)

.PHONY: fuzz fuzz-build fuzz-smoke fuzz-replay lint cppcheck clang-tidy
test check: $(FUZZ_REPLAYS)
fuzz-replay: $(FUZZ_REPLAYS)

$(BUILD)/fuzz/%_replay: $(BUILD)/obj/fuzz/%.o $(BUILD)/obj/fuzz/regression_driver.o $(STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LIBS_ALL)

# The harnesses of the tools link the tool's code without its main().
$(BUILD)/obj/fuzz/tools/%.o: tools/%.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (no main)")
	$(Q)$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(PKG_CFLAGS) -DREC_TOOL_NO_MAIN -MMD -MP -c $< -o $@
$(foreach t,print flame lockgraph timeline view report,$(eval \
  $(BUILD)/fuzz/$(t)_replay: $(BUILD)/obj/fuzz/tools/rec-$(t).o $(CLI_OBJS)))
$(BUILD)/fuzz/lockgraph_replay: $(GV_OBJS)
$(BUILD)/fuzz/lockgraph_replay: LIBS_ALL += $(GV_LIBS)
$(BUILD)/fuzz/report_replay: $(REPORT_OBJS) $(GV_OBJS)
$(BUILD)/fuzz/report_replay: LIBS_ALL += $(GV_LIBS)

fuzz-build: $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory -f fuzz/Makefile FUZZ_BUILD=$(FUZZ_BUILD) all

fuzz: fuzz-build
	$(Q)$(MAKE) --no-print-directory -f fuzz/Makefile FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) run

fuzz-smoke: fuzz-build
	$(Q)$(MAKE) --no-print-directory -f fuzz/Makefile FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) run

# make lint fails on any finding: cppcheck through --error-exitcode, clang-tidy
# through WarningsAsErrors in .clang-tidy.  Configuration: .clang-tidy and
# .cppcheck-suppressions (each disabled check or suppression says why; inline
# ones are NOLINT(check)/cppcheck-suppress comments with the reason).
# cppcheck and clang-tidy are installed like the other Debian packages.
LINT_JOBS ?= 2
LINT_DEPS_STAMP := $(BUILD)/.deps-lint-ok
lint: cppcheck clang-tidy

# Extra Debian packages through the deps rule in a sub-make (its DEPS_STAMP
# is then this stamp, so the rule is not defined again there).
ifneq ($(REC_EXTRA_DEPS),1)
$(LINT_DEPS_STAMP): | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory deps REC_EXTRA_DEPS=1 DEB_PKGS="cppcheck clang-tidy" DEPS_STAMP=$@
endif

cppcheck: $(LINT_DEPS_STAMP)
	$(Q)cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
	  --inline-suppr --suppressions-list=.cppcheck-suppressions -D_GNU_SOURCE -D__GNUC__ \
	  -Ilibfmt/include -Ilibfmt --library=posix $(LINT_SRCS)

# One clang-tidy per file, LINT_JOBS at a time (clang-tidy 14 given all files
# at once crashed in its lexer); each file's report is printed whole, without
# the "N warnings generated." lines (diagnostics the configuration filters).
# rec-view.c includes the generated $(BUILD)/gen/view_sql.h.
clang-tidy: $(LINT_DEPS_STAMP) $(BUILD)/gen/view_sql.h
	$(Q)printf '%s\n' $(LINT_SRCS) | xargs -P $(LINT_JOBS) -n 1 sh -c \
	  'out=$$(clang-tidy --quiet "$$0" -- $(CPPFLAGS_ALL) -I$(BUILD)/gen -std=c17 $(PKG_CFLAGS) 2>&1); rc=$$?; \
	   [ $$rc -eq 0 ] || printf "%s\n" "$$out" | grep -v "generated\.$$"; exit $$rc' \
	  || { echo "clang-tidy: findings above" >&2; exit 1; }
# ==== end of the fuzzing block ==============================================

# ==== valgrind memcheck (issue 6) ===========================================
#   make test-valgrind   the unit tests, and the programs the CLI scripts run,
#                        under valgrind memcheck, leaks included: any error or
#                        definite/indirect leak fails the test (tests/valgrind.sh
#                        says how, which tests run reduced, and why).
# On the default build in $(BUILD) (valgrind and ASan exclude each other), VG_JOBS
# tests at a time; VG_STRIDE=1 runs every program start of the CLI scripts under
# valgrind (default: a sample).  valgrind is installed like the other Debian packages.
VG_JOBS ?= 2
VALGRIND_DEPS_STAMP := $(BUILD)/.deps-valgrind-ok
.PHONY: test-valgrind
ifneq ($(REC_EXTRA_DEPS),1)
$(VALGRIND_DEPS_STAMP): | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory deps REC_EXTRA_DEPS=1 DEB_PKGS=valgrind DEPS_STAMP=$@
endif
test-valgrind: all $(UNITS) $(HELPERS) $(FUZZ_REPLAYS) $(TEST_DEPS_STAMP) $(VALGRIND_DEPS_STAMP)
	$(Q)if [ "$(SAN)" = 1 ]; then echo "test-valgrind: not with SAN=1" >&2; exit 1; fi
	$(Q)BUILD=$(BUILD) REC_VALGRIND=1 REC_TEST_JOBS=$(VG_JOBS) $(if $(VG_STRIDE),REC_VG_STRIDE=$(VG_STRIDE)) bash tests/run.sh
