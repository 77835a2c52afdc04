# sysid build. `make` builds ./sysid; `make test` runs the Check suites and tests/cli.sh;
# `make debug` runs the same tests under ASan + UBSan; `make bench` runs the benchmarks.
CC      ?= cc
OPT     ?= -O3
CFLAGS  ?= $(OPT)
WARN     = -std=c11 -Wall -Wextra -Werror -Wpedantic -Wshadow -Wmissing-prototypes -Wvla \
           -ffp-contract=off -D_POSIX_C_SOURCE=200809L
PKGS     = libcjson nlopt libxml-2.0
# Asked of pkg-config when first used, not when the Makefile is read, so that
# `make deps demo` on a fresh machine sees the packages `deps` has just installed.
lazy = $(eval $1 := $$(shell $2))$($1)
PKG_CFLAGS   = $(call lazy,PKG_CFLAGS,pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS     = $(call lazy,PKG_LIBS,pkg-config --libs $(PKGS) 2>/dev/null || echo -lcjson -lnlopt -lxml2)
CHECK_CFLAGS = $(call lazy,CHECK_CFLAGS,pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(call lazy,CHECK_LIBS,pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)
MUJOCO_LIBS  = -lmujoco
OMP      = -fopenmp

B        ?= build
BIN      ?= sysid
CORE_SRC  = $(wildcard core/*/*.c)
IO_SRC    = $(wildcard io/*.c) $(wildcard report/*.c) $(wildcard pipeline/*.c)
CLI_SRC   = $(filter-out cli/main.c,$(wildcard cli/*.c))
TEST_SRC  = $(wildcard tests/test_*.c) tests/twin.c tests/constraint_rig.c
BENCH_SRC = $(wildcard tests/bench/*.c)
CORE_OBJ  = $(CORE_SRC:%.c=$(B)/%.o)
IO_OBJ    = $(IO_SRC:%.c=$(B)/%.o)
CLI_OBJ   = $(CLI_SRC:%.c=$(B)/%.o)
TEST_OBJ  = $(TEST_SRC:%.c=$(B)/%.o)
# Each layer sees the public headers (include/sysid/), its own folder and the layers below it,
# never one above: a header of a higher layer included in a lower one fails to compile. The
# core's layers, bottom up (core/README.md): each folder's README says what it holds.
INC_base     = -Iinclude/sysid -Icore/base
INC_model    = $(INC_base) -Icore/model
INC_dynamics = $(INC_model) -Icore/dynamics
INC_step     = $(INC_dynamics) -Icore/step
INC_problem  = $(INC_step) -Icore/problem
INC_fit      = $(INC_problem) -Icore/fit
INC_stats    = $(INC_fit) -Icore/stats
INC_core     = $(INC_stats)
INC_io       = $(INC_core) -Iio
INC_report   = $(INC_io) -Ireport
INC_pipeline = $(INC_report) -Ipipeline
INC_cli      = $(INC_pipeline) -Icli
INC_tests    = $(INC_cli) $(CHECK_CFLAGS)
ALL_FLAGS = $(WARN) $(CFLAGS) $(OMP) $(PKG_CFLAGS) $(INC_cli)
# Each object lists the headers it included (-MMD, build/**/*.d): a header change rebuilds
# only what includes it.
DEPFLAGS  = -MMD -MP
LAYER_CC  = $(CC) $(CPPFLAGS) $(DEPFLAGS) $(WARN) $(CFLAGS) $(OMP) $(PKG_CFLAGS)

.PHONY: all mpi test unit debug bench clean logs deps demo fuzz fuzz-deps golden lib install uninstall install-check deb deb-deps
all: $(BIN) lib

# A source's include paths are its layer's: core/LAYER/file.c INC_LAYER, FOLDER/file.c INC_FOLDER.
path_words = $(subst /, ,$1)
layer_inc  = $(INC_$(if $(filter core,$(word 1,$(call path_words,$1))),$(word 2,$(call path_words,$1)),$(word 1,$(call path_words,$1))))

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(LAYER_CC) $(call layer_inc,$*) -c $< -o $@

$(B)/libsysid.a: $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/libsysidio.a: $(IO_OBJ)
	rm -f $@ && ar rcs $@ $^

$(B)/libsysidcli.a: $(CLI_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(B)/cli/main.o $(B)/libsysidcli.a $(B)/libsysidio.a $(B)/libsysid.a
	$(CC) $(CFLAGS) $(OMP) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcsv -llapack -lm

# sysid-mpi (`make mpi`): the fit on many processes (mpi/main.c), compiled and linked with
# Open MPI's mpicc; plain `make` and sysid never link MPI. `make test` builds it when mpicc is
# there, for tests/cli_mpi.sh.
MPICC    ?= mpicc
HAVE_MPI  = $(call lazy,HAVE_MPI,command -v $(MPICC) 2>/dev/null)
MPI_OBJ   = $(patsubst %.c,$(B)/%.o,$(wildcard mpi/*.c))

$(B)/mpi/%.o: mpi/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CPPFLAGS) $(DEPFLAGS) $(ALL_FLAGS) -Impi -c $< -o $@

$(B)/sysid-mpi: $(MPI_OBJ) $(B)/libsysidcli.a $(B)/libsysidio.a $(B)/libsysid.a
	$(MPICC) $(CFLAGS) $(OMP) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcsv -llapack -lm

mpi: $(B)/sysid-mpi

$(B)/test_runner: $(TEST_OBJ) $(B)/libsysidcli.a $(B)/libsysidio.a $(B)/libsysid.a
	$(CC) $(CFLAGS) $(OMP) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcsv -llapack $(CHECK_LIBS) $(MUJOCO_LIBS) -lm

unit: $(B)/test_runner
	cd tests && ../$(B)/test_runner

# The parts of `make test`: the Check suites, each tests/cli*.sh and the goldens. They run as
# jobs of their own (`make -j2 test` runs two at once: every script has its own temporary
# directory), each part's output printed whole when it ends so that parts never interleave, with its
# wall time (which part bounds CI's time).
TEST_PARTS = unit $(patsubst tests/%.sh,%,$(wildcard tests/cli*.sh)) golden
test_cmd = $(if $(filter unit,$1),cd tests && ../$(B)/test_runner,$(if $(filter golden,$1),\
    SYSID=$(abspath $(BIN)) bash tests/golden/run.sh check,\
    SYSID=$(abspath $(BIN)) PNGSTAT=$(abspath $(B)/pngstat) SYSID_BUILD=$(abspath $(B)) SYSID_LDFLAGS="$(LDFLAGS)" bash tests/$1.sh))

test: $(BIN) $(B)/test_runner $(B)/pngstat $(if $(SYSID_NO_INSTALL),,lib) $(if $(and $(HAVE_MPI),$(filter cli_mpi,$(TEST_PARTS))),$(B)/sysid-mpi)
	@$(MAKE) --no-print-directory $(TEST_PARTS:%=test-part-%)

test-part-%: FORCE
	@mkdir -p $(B)/test-out; log=$(B)/test-out/$*.log; t0=$$(date +%s); \
	if ($(call test_cmd,$*)) >$$log 2>&1; then cat $$log; echo "== $*: $$(($$(date +%s) - t0)) s"; \
	else cat $$log; echo "== make test: $* FAILED"; exit 1; fi

FORCE:

# Record the golden outputs (tests/golden/cases.txt) anew; review the diff like code.
golden: $(BIN)
	SYSID=$(abspath $(BIN)) bash tests/golden/run.sh record

# The sanitizer build leaves out the slow recovery fits (Check tag "slow"): they test numerics,
# which the optimised `make test` covers, and would take most of CI's time under ASan. It also
# skips tests/cli_html.sh's browser checks (SYSID_NO_BROWSER=1): they test the page, which
# `make test` renders, not sysid's memory; and tests/cli_install.sh (SYSID_NO_INSTALL=1): it
# tests the install and the link, and the library's calls run under the sanitizers in the
# io_api suite. Check's per-test timeouts are tripled (CK_TIMEOUT_MULTIPLIER): the sanitizers
# slow everything and the test parts share the cores. It leaves out two parts that compare
# outputs, not memory: the goldens (byte-identical outputs of fits every other part also runs)
# and tests/cli_readme.sh (the examples of README.md and docs/); together they were 6 of its 21 minutes of
# test time, which CI's 20 minutes no longer hold. And tests/cli_mpi.sh: Open MPI's own
# allocations would be reported as leaks at exit (the MPI binary is built by `make mpi` alone).
DEBUG_PARTS = $(filter-out golden cli_readme cli_mpi,$(TEST_PARTS))
debug:
	SYSID_NO_BROWSER=1 SYSID_NO_INSTALL=1 CK_EXCLUDE_TAGS=slow CK_TIMEOUT_MULTIPLIER=3 $(MAKE) B=build-debug BIN=build-debug/sysid OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" TEST_PARTS="$(DEBUG_PARTS)" test

# The rows of bench_runner, then the command as typed against MuJoCo's finite-difference fit,
# whole processes side by side (tests/bench/as_typed.sh; BENCH_ROW=typed runs it alone).
bench: $(B)/bench_runner $(BIN) $(B)/mjlog $(B)/mjfit
	@if [ "$${BENCH_ROW:-}" != typed ]; then ./$(B)/bench_runner; fi
	@if [ -z "$${BENCH_ROW:-}" ] || [ "$${BENCH_ROW:-}" = typed ]; then \
	    SYSID=./$(BIN) MJLOG=$(B)/mjlog MJFIT=$(B)/mjfit bash tests/bench/as_typed.sh; fi

$(B)/bench_runner: $(BENCH_SRC:%.c=$(B)/%.o) $(B)/libsysidcli.a $(B)/libsysidio.a $(B)/libsysid.a
	$(CC) $(CFLAGS) $(OMP) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcsv -llapack $(MUJOCO_LIBS) -lm

# MuJoCo twins and example logs of data/ (tests/tools/mklogs.sh says how they are made).
$(B)/mjlog: tests/tools/mjlog.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) -o $@ $< $(MUJOCO_LIBS) -lm

# MuJoCo's own finite-difference fit of a log: the reference column of the tables of docs/recovery.md.
$(B)/mjfit: tests/tools/mjfit.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(PKG_CFLAGS) -o $@ $< $(MUJOCO_LIBS) -lnlopt -lm

# Is a screenshot blank? (tests/cli_html.sh: the report page as chromium draws it.)
$(B)/pngstat: tests/tools/pngstat.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(LDFLAGS) -o $@ $< -lz

# Feed-forward torques of a smooth excitation (tests/tools/mkpanda.sh makes data/panda/ with it).
$(B)/feedforward: tests/tools/feedforward.c $(B)/libsysidcli.a $(B)/libsysidio.a $(B)/libsysid.a
	$(CC) $(ALL_FLAGS) -o $@ $^ $(PKG_LIBS) -lcsv -llapack -lm

logs: $(B)/mjlog
	MJLOG=$(B)/mjlog sh tests/tools/mklogs.sh

# Debian packages the build, the tests and the benchmarks need; installs only what is missing.
# chromium renders the HTML report in tests/cli_html.sh; zlib1g-dev builds its screenshot checker;
# groff-base renders the man page in tests/cli_install.sh; openmpi-bin and libopenmpi-dev build
# and run sysid-mpi (tests/cli_mpi.sh).
DEB_PKGS = build-essential pkg-config libcjson-dev libcsv-dev libnlopt-dev liblapack-dev check libxml2-dev libmujoco-dev jq \
           chromium zlib1g-dev groff-base openmpi-bin libopenmpi-dev
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "installing:" $$missing; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

# libFuzzer harnesses (tests/fuzz/fuzz_*.c; not part of `make test`), each run FUZZ_SECONDS
# on its seeds (tests/fuzz/corpus_<name>/ for fuzz_<name>) plus what earlier runs found
# (build-fuzz/corpus_<name>/).
# Their compiler, clang, is installed by `make fuzz-deps`, which `make fuzz` runs first.
FUZZ_PKGS    = clang
FUZZ_SECONDS ?= 60
FUZZ_CC      = clang
FUZZ_FLAGS   = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -std=c11 -D_POSIX_C_SOURCE=200809L
FUZZ_NAMES   = $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_OBJ     = $(CORE_SRC:%.c=build-fuzz/%.o) $(IO_SRC:%.c=build-fuzz/%.o) $(CLI_SRC:%.c=build-fuzz/%.o)
.SECONDARY: $(FUZZ_OBJ)

build-fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) $(INC_cli) -c $< -o $@

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Wall -Wextra -Werror -fsanitize=fuzzer $(PKG_CFLAGS) $(INC_cli) $< $(FUZZ_OBJ) -o $@ $(PKG_LIBS) -lcsv -llapack -lm

fuzz-deps:
	@$(MAKE) deps DEB_PKGS="$(FUZZ_PKGS)"

fuzz: fuzz-deps
	@$(MAKE) $(FUZZ_NAMES:%=build-fuzz/%)
	@set -e; for t in $(FUZZ_NAMES); do \
	    echo "== $$t ($(FUZZ_SECONDS) s; log in build-fuzz/$$t.log)"; c=corpus_$${t#fuzz_}; mkdir -p build-fuzz/$$c; \
	    ./build-fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=20 -close_fd_mask=3 -print_final_stats=1 \
	        build-fuzz/$$c tests/fuzz/$$c >build-fuzz/$$t.log 2>&1 || { tail -80 build-fuzz/$$t.log; exit 1; }; \
	    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss)' build-fuzz/$$t.log; \
	done

# A real fit on a bundled recording: the DFKI pendulum's swing-up, checked on the PD run it
# never saw, against the parameters its builders published (the robot.json it starts from).
demo: $(BIN)
	@mkdir -p $(B)
	@echo "== fit the DFKI pendulum (real hardware) to its swing-up; held out: the builders' identification run"
	./$(BIN) fit data/dfki_pendulum/robot.json data/dfki_pendulum/ddp_swingup_data_measured.csv \
	    -c data/dfki_pendulum/fit.json --validate data/dfki_pendulum/sysid_pd_data_measured.csv \
	    -o $(B)/dfki_pendulum_fitted.json --report $(B)/dfki_pendulum_report.json --html $(B)/dfki_pendulum_report.html
	@echo "== \"nominal\" above = the builders' published parameters (data/dfki_pendulum/README.md)"
	@jq -r '[.derived[] | {(.name): .}] | add as $$d | "== what the swing-up determines: m·l \($$d["links.pole.mass*com[2]"].fitted | -. * 1e4 | round / 1e4) ± \($$d["links.pole.mass*com[2]"].stderr_robust | . * 1e4 | round / 1e4) kg·m and J \($$d["joints.hinge.inertia_about_axis"].fitted * 1e4 | round / 1e4) ± \($$d["joints.hinge.inertia_about_axis"].stderr_robust * 1e4 | round / 1e4) kg·m² (1 s.e., robust); published 0.1022 and 0.0626; the documented hardware, 0.676 kg at 0.5 m: m·l 0.338"' $(B)/dfki_pendulum_report.json
	@echo "== the mass and COM above split m·l and J with kt = 1 and the rotor's and the link's own inertia as published: motion cannot tell a torque scale from the masses (with kt free too, kt, the mass and the friction levels move together, a direction the data do not determine)"
	@p=$$(./$(BIN) eval data/dfki_pendulum/robot.json data/dfki_pendulum/sysid_pd_data_measured.csv -c data/dfki_pendulum/fit.json -q --json | jq .rmse.q.hinge); \
	f=$$(./$(BIN) eval $(B)/dfki_pendulum_fitted.json data/dfki_pendulum/sysid_pd_data_measured.csv -c data/dfki_pendulum/fit.json -q --json | jq .rmse.q.hinge); \
	awk -v p=$$p -v f=$$f 'BEGIN { printf "== held out (PD run, 0.3 s windows): q RMSE %.4f rad with the published parameters, %.4f fitted: %.1fx better\n", p, f, p / f }'
	@echo "== fitted robot: $(B)/dfki_pendulum_fitted.json, report: $(B)/dfki_pendulum_report.json"
	@echo "== report page (open in a browser): $(B)/dfki_pendulum_report.html"

# ---- libsysid: what programs link (docs/library.md) --------------------------------------
# One library, core, io, report and pipeline together (the HTML page's renderer too: the
# report's home is one folder), with two public headers: include/sysid/sid.h and sid_io.h.
# io calls core functions that are not its API (kinematics.h, linalg.h), so two shared
# libraries would have to export them; in one, the version script (tools/mkmap.sh, from the
# headers) exports exactly the declared functions under SYSID_1.0. The sysid binary keeps
# linking the static archives of the build tree.
VERSION    = $(shell sed -n 's/^\#define SID_VERSION "\(.*\)"/\1/p' include/sysid/sid.h)
SOVERSION  = 1
LIBVERSION = $(SOVERSION).0.0
PIC_OBJ    = $(CORE_SRC:%.c=$(B)/pic/%.o) $(IO_SRC:%.c=$(B)/pic/%.o)
SO         = $(B)/lib/libsysid.so.$(LIBVERSION)
LIB_LIBS   = $(PKG_LIBS) -lcsv -llapack -lm
lib: $(SO) $(B)/lib/libsysid.a $(B)/sysid.pc $(B)/sysid.1

$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(LAYER_CC) $(call layer_inc,$*) -fPIC -c $< -o $@

$(B)/lib/sysid.map: include/sysid/sid_io.h include/sysid/sid.h tools/mkmap.sh
	@mkdir -p $(dir $@)
	sh tools/mkmap.sh "$(CC) -E -Iinclude/sysid" include/sysid/sid_io.h > $@

$(SO): $(PIC_OBJ) $(B)/lib/sysid.map
	$(CC) -shared $(CFLAGS) $(OMP) $(LDFLAGS) -Wl,-soname,libsysid.so.$(SOVERSION) \
	    -Wl,--version-script,$(B)/lib/sysid.map -Wl,--no-undefined -o $@ $(PIC_OBJ) $(LIB_LIBS)
	ln -sf libsysid.so.$(LIBVERSION) $(B)/lib/libsysid.so.$(SOVERSION)
	ln -sf libsysid.so.$(SOVERSION) $(B)/lib/libsysid.so

$(B)/lib/libsysid.a: $(PIC_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# ---- install --------------------------------------------------------------------------------
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL    ?= install

$(B)/sysid.pc: tools/sysid.pc.in include/sysid/sid.h
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@

# sysid(1): a section per command, from the binary's own help texts (tools/mkman.sh).
$(B)/sysid.1: $(BIN) tools/mkman.sh
	@mkdir -p $(dir $@)
	sh tools/mkman.sh $(abspath $(BIN)) > $@.tmp && mv $@.tmp $@

# The .pc names PREFIX: rebuilt for each install, so that `make install PREFIX=...` is right.
install: $(BIN) $(SO) $(B)/lib/libsysid.a $(B)/sysid.1
	rm -f $(B)/sysid.pc && $(MAKE) --no-print-directory $(B)/sysid.pc PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/sysid \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 755 $(BIN) $(DESTDIR)$(BINDIR)/sysid
	$(INSTALL) -m 644 $(SO) $(DESTDIR)$(LIBDIR)/libsysid.so.$(LIBVERSION)
	ln -sf libsysid.so.$(LIBVERSION) $(DESTDIR)$(LIBDIR)/libsysid.so.$(SOVERSION)
	ln -sf libsysid.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libsysid.so
	$(INSTALL) -m 644 $(B)/lib/libsysid.a $(DESTDIR)$(LIBDIR)/libsysid.a
	$(INSTALL) -m 644 include/sysid/sid.h include/sysid/sid_params.h include/sysid/sid_io.h $(DESTDIR)$(INCLUDEDIR)/sysid/
	$(INSTALL) -m 644 $(B)/sysid.pc $(DESTDIR)$(LIBDIR)/pkgconfig/sysid.pc
	$(INSTALL) -m 644 $(B)/sysid.1 $(DESTDIR)$(MANDIR)/man1/sysid.1
	$(INSTALL) -m 644 tools/sysid.bash $(DESTDIR)$(BASHCOMPDIR)/sysid

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/sysid $(DESTDIR)$(LIBDIR)/libsysid.so.$(LIBVERSION) \
	    $(DESTDIR)$(LIBDIR)/libsysid.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libsysid.so $(DESTDIR)$(LIBDIR)/libsysid.a \
	    $(DESTDIR)$(INCLUDEDIR)/sysid/sid.h $(DESTDIR)$(INCLUDEDIR)/sysid/sid_params.h $(DESTDIR)$(INCLUDEDIR)/sysid/sid_io.h \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/sysid.pc $(DESTDIR)$(MANDIR)/man1/sysid.1 $(DESTDIR)$(BASHCOMPDIR)/sysid
	-rmdir $(DESTDIR)$(INCLUDEDIR)/sysid 2>/dev/null

# Install into a staging directory, build examples/fit_friction.c against it with pkg-config
# (shared and static), run it and compare with `sysid fit` (tests/cli_install.sh, also part
# of `make test`).
install-check: $(BIN) lib
	SYSID=$(abspath $(BIN)) SYSID_BUILD=$(abspath $(B)) SYSID_LDFLAGS="$(LDFLAGS)" bash tests/cli_install.sh

# Debian packages (debian/): sysid, libsysid1, libsysid-dev, built from a copy of the sources
# in build-deb/ (dpkg-buildpackage writes its .debs next to the source tree), then lintian.
# Needs debhelper and lintian, which `make deps` does not install: `make deb-deps` does.
# Not part of CI (it builds everything once more).
DEB_SRC = Makefile README.md docs include core io report pipeline cli tools examples debian
deb:
	@command -v dh >/dev/null && command -v lintian >/dev/null || { echo "make deb needs debhelper and lintian: make deb-deps"; exit 2; }
	rm -rf build-deb && mkdir -p build-deb/sysid-$(VERSION)
	cp -r $(DEB_SRC) build-deb/sysid-$(VERSION)/
	cd build-deb/sysid-$(VERSION) && dpkg-buildpackage -us -uc -b
	lintian --fail-on error build-deb/sysid_$(VERSION)_$$(dpkg --print-architecture).changes

deb-deps:
	@$(MAKE) deps DEB_PKGS="debhelper lintian"

clean:
	rm -rf build build-debug build-fuzz build-deb sysid

# The header lists of -MMD (none before the first build).
-include $(shell find $(B) build-fuzz -name '*.d' 2>/dev/null)
