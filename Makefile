# Thin wrapper over scripts/. The real work (and its knobs) lives there.
#
#   make build                      deps + RelWithDebInfo build in build/
#   make run [GAMES=N GATEWAYS=N]   start the local stack (scripts/stack.sh start)
#   make stop | make status
#   make test                       sanitized build in build-asan/ + ctest (scripts/test.sh)
#   make loadtest [LOADTEST_ARGS=...]  build/bin/loadtest run against the running stack
#   make format                     clang-format the C sources in place
#   make clean                      remove build trees (not var/: use make stop; rm -rf var)

# GAMES / GATEWAYS (default 1, or those of the running stack) pass through the
# environment to scripts/stack.sh.
export GAMES GATEWAYS

# The running stack's first gateway, and its Postgres (for seeding accounts).
LOADTEST_ARGS ?= --target=$$(scripts/stack.sh gateways | cut -d, -f1) --pg="host=127.0.0.1 port=55432 dbname=scrabble user=scrabble_loadtest passfile=$(CURDIR)/var/secrets/pg-scrabble_loadtest.pgpass"

.PHONY: all build run start stop status test loadtest format clean

all: build

build:
	scripts/stack.sh build

run start:
	scripts/stack.sh start

stop:
	scripts/stack.sh stop

status:
	scripts/stack.sh status

test:
	scripts/test.sh

loadtest:
	@test -x build/bin/loadtest || { echo "build/bin/loadtest is not built yet (make build)"; exit 1; }
	build/bin/loadtest run $(LOADTEST_ARGS)

format:
	git ls-files '*.c' '*.h' | xargs -r clang-format -i

clean:
	rm -rf build build-asan
