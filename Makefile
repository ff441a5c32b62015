# locklab: the two commands are `make run` and `make test` (see README.md).
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
# Debian packages the build and the tests need.
PKGS := g++ cmake make pkg-config libhiredis-dev libevent-dev nlohmann-json3-dev libcli11-dev \
        libgtest-dev libgmock-dev libbenchmark-dev redis-server redis-tools

.PHONY: all deps build test run bench clean

all: build

deps:
	@missing=""; for p in $(PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = "0" ]; then \
	    echo "make: installing missing packages:$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	    if command -v systemctl >/dev/null 2>&1; then systemctl stop redis-server >/dev/null 2>&1 || true; fi; \
	  else \
	    echo "make: missing packages. Run this once, then make again:"; \
	    echo "  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

run: build
	./$(BUILD)/locklab suite --backend sim,redis --out-dir results

bench: build
	./$(BUILD)/locklab_bench

clean:
	rm -rf $(BUILD)
