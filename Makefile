# sysid build. `make` builds ./sysid; `make test` runs the Check suites and tests/cli.sh;
# `make debug` runs the same tests under ASan + UBSan; `make bench` runs the benchmarks.
CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= $(OPT)
WARN     = -std=c11 -Wall -Wextra -Werror -Wpedantic -Wshadow -Wmissing-prototypes -Wvla \
           -ffp-contract=off -D_POSIX_C_SOURCE=200809L
PKGS     = libcjson nlopt
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lcjson -lnlopt)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lpthread)
MUJOCO_LIBS  = -lmujoco

B        ?= build
CORE_SRC  = $(wildcard core/*.c)
CLI_SRC   = $(filter-out cli/main.c,$(wildcard cli/*.c))
TEST_SRC  = $(wildcard tests/test_*.c)
BENCH_SRC = $(wildcard tests/bench/*.c)
CORE_OBJ  = $(CORE_SRC:%.c=$(B)/%.o)
CLI_OBJ   = $(CLI_SRC:%.c=$(B)/%.o)
TEST_OBJ  = $(TEST_SRC:%.c=$(B)/%.o)
ALL_FLAGS = $(WARN) $(CFLAGS) $(PKG_CFLAGS) -Icore -Icli

.PHONY: all test unit debug bench clean golden
all: sysid

$(B)/%.o: %.c $(wildcard core/*.h cli/*.h tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_FLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(B)/libsysid.a: $(CORE_OBJ)
	ar rcs $@ $^

$(B)/libsysidcli.a: $(CLI_OBJ)
	ar rcs $@ $^

sysid: $(B)/cli/main.o $(B)/libsysidcli.a $(B)/libsysid.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcsv -lm

$(B)/test_runner: $(TEST_OBJ) $(B)/libsysidcli.a $(B)/libsysid.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcsv $(CHECK_LIBS) $(MUJOCO_LIBS) -lm

unit: $(B)/test_runner
	cd tests && ../$(B)/test_runner

test: sysid $(B)/test_runner
	cd tests && ../$(B)/test_runner
	SYSID=$(CURDIR)/sysid bash tests/cli.sh

debug:
	$(MAKE) B=build-debug OPT="-O0 -g3 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" test

bench: $(B)/bench_runner
	./$(B)/bench_runner

$(B)/bench_runner: $(BENCH_SRC:%.c=$(B)/%.o) $(B)/libsysidcli.a $(B)/libsysid.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcsv $(MUJOCO_LIBS) -lm

clean:
	rm -rf build build-debug sysid
