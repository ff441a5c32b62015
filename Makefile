# locklab: the two commands are `make run` and `make test` (see README.md).
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
# Debian packages the build and the tests need.
PKGS := g++ cmake make pkg-config libhiredis-dev libevent-dev nlohmann-json3-dev libcli11-dev \
        libgtest-dev libgmock-dev libbenchmark-dev libjemalloc-dev redis-server redis-sentinel redis-tools python3 libboost-dev \
        parallel

# What `make plots` needs on top: Jupyter's nbconvert, a Python kernel, pandas and matplotlib.
PLOT_PKGS := jupyter-nbconvert python3-nbconvert python3-nbclient python3-ipykernel python3-pandas python3-matplotlib python3-scipy
# Debian's own Python runs the notebooks (its packages are the ones installed above).
PYTHON := /usr/bin/python3

.PHONY: all deps plot-deps build test test-slurm run bench bench-instructions plots retry-study maps clean

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
	    if command -v systemctl >/dev/null 2>&1; then systemctl stop redis-server redis-sentinel >/dev/null 2>&1 || true; fi; \
	  else \
	    echo "make: missing packages. Run this once, then make again:"; \
	    echo "  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

plot-deps:
	@$(MAKE) --no-print-directory deps PKGS="$(PLOT_PKGS)"

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The peer-driver tests run too: test-peer-deps installs what they need (below) the same way.
test: build test-peer-deps
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# A one-node Slurm on this machine (root), a sweep as a job array, merged and compared with the
# unsharded sweep; every daemon is stopped at the end (harness/testing/slurm_test.sh).
test-slurm: build
	@$(MAKE) --no-print-directory deps PKGS="slurmd slurmctld slurm-client munge"
	sh harness/testing/slurm_test.sh $(BUILD)/locklab

# The main job: the study (every algorithm x fault preset, 500 seeds per cell on the simulator,
# 4 on real Redis, rates with 95% intervals), then its heatmaps (notebooks/study.ipynb).
run: build plot-deps
	./$(BUILD)/locklab study --backend sim,redis --seeds 500 --redis-seeds 4 --out results/study/study.json
	@mkdir -p $(BUILD)/notebooks
	@PYDEVD_DISABLE_FILE_VALIDATION=1 $(PYTHON) -m jupyter nbconvert --to notebook --execute \
	  --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 \
	  --output-dir $(BUILD)/notebooks notebooks/study.ipynb > $(BUILD)/notebooks/study.log 2>&1 \
	  || { cat $(BUILD)/notebooks/study.log; echo "make: notebooks/study.ipynb failed"; exit 1; }
	@echo "heatmap: results/plots/study_heatmap.png"

bench: build
	./$(BUILD)/locklab_bench

# Instructions per simulated command and per small seed under valgrind's cachegrind: the same
# count on every run of a build to a few parts in a million, however busy the machine
# (docs/speed.md). BASELINE=path/to/locklab counts that build too, prints the ratio and compares
# the two builds' reports byte for byte (harness/testing/compare_reports.sh).
bench-instructions: build
	sh harness/bench/instructions.sh ./$(BUILD)/locklab $(BASELINE)

# Executes every notebook headless (maps.ipynb included); each writes its PNGs into results/plots/ from the committed
# JSON reports (nothing is re-run). The executed copies go to build/notebooks/.
plots: plot-deps
	@mkdir -p results/plots $(BUILD)/notebooks
	@for nb in notebooks/*.ipynb; do \
	  echo "make: executing $$nb"; \
	  PYDEVD_DISABLE_FILE_VALIDATION=1 $(PYTHON) -m jupyter nbconvert --to notebook --execute \
	    --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 \
	    --output-dir $(BUILD)/notebooks "$$nb" > $(BUILD)/notebooks/nbconvert.log 2>&1 \
	    || { cat $(BUILD)/notebooks/nbconvert.log; echo "make: $$nb failed"; exit 1; }; \
	done
	@ls results/plots/*.png

# The retry-strategy study (slow: several minutes on real Redis): regenerates results/retry/.
retry-study: build
	./$(BUILD)/locklab run --config harness/experiments/retry-strategies.json --backend sim --out results/retry/sim.json --quiet
	./$(BUILD)/locklab run --config harness/experiments/retry-strategies.json --backend redis --out results/retry/redis.json --quiet
	./$(BUILD)/locklab run --config harness/experiments/retry-fifo.json --backend sim --out results/retry/fifo-sim.json --quiet
	./$(BUILD)/locklab run --config harness/experiments/retry-fifo.json --backend redis --out results/retry/fifo-redis.json --quiet

# The violation-probability maps (README "Violation maps"): every map of `locklab map --list` on the
# simulator into results/maps/<name>.json (about 45 minutes on 2 quiet cores; failover-lag capped at
# 3000 seeds per point, as committed: its default cap takes hours), then notebooks/maps.ipynb draws them
# into results/plots/map-<name>.png.
MAPS := pause-ttl hold-ttl skew-ttl drift-ppm failover-lag release-delay node-clock-jump slow-reply
maps: build plot-deps
	@for m in $(MAPS); do \
	  extra=""; [ $$m = failover-lag ] && extra="--max-seeds 3000"; \
	  ./$(BUILD)/locklab map $$m $$extra --quiet --out results/maps/$$m.json || exit 1; \
	done
	@mkdir -p results/plots $(BUILD)/notebooks
	@PYDEVD_DISABLE_FILE_VALIDATION=1 $(PYTHON) -m jupyter nbconvert --to notebook --execute \
	  --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 \
	  --output-dir $(BUILD)/notebooks notebooks/maps.ipynb > $(BUILD)/notebooks/maps.log 2>&1 \
	  || { cat $(BUILD)/notebooks/maps.log; echo "make: notebooks/maps.ipynb failed"; exit 1; }
	@ls results/plots/map-*.png

clean:
	rm -rf $(BUILD)

# The validation (README "Validation: simulator vs real Redis"): canonical experiments on both
# backends over several seeds, a verdict per metric. The full set takes about an hour on real
# Redis; validate-quick is the small version (well under a minute). `make plots` draws either
# (notebooks/validation.ipynb -> results/plots/validation.png).
.PHONY: validate validate-quick validate-retry-pooled
validate: build
	./$(BUILD)/locklab validate --out results/validation/validation.json
validate-quick: build
	./$(BUILD)/locklab validate --quick --out results/validation/quick.json
# The committed retry judgement (README "Real Redis's sittings"): 10 simulator seeds a strategy against
# every real retry validation recorded since the CPU placement, the sittings pooled (no real run is made).
RETRY_SITTINGS := vm-2026-11-27/evening/retry.json vm-2026-11-27/night/retry.json vm-2026-11-27/night/retry-10-seeds.json \
  vm-2026-11-28/retry-profile-socket.json vm-2026-11-28/retry-stalls-fresh.json vm-2026-11-28/retry-10-seeds-evening.json \
  vm-2026-11-28/retry-2229.json
validate-retry-pooled: build
	./$(BUILD)/locklab validate --only retry --seeds 10 $(foreach f,$(RETRY_SITTINGS),--real-from results/validation/$(f)) \
	  --out results/validation/retry.json --no-progress

# The peer benchmark (README "Peer benchmark"): locklab next to node-redlock, redis-semaphore and
# redis-py's Lock on the same redis-server processes. On top of PKGS it needs Debian's redis-py and
# Node.js with npm (Debian's npm only when no npm is on PATH: a Node.js from elsewhere brings its
# own); npm installs the Node.js peers pinned in harness/bench/peers/package-lock.json into
# $(BUILD)/peers/node_modules (again only when the lock file changed). `make test` installs the
# same (test-peer-deps), so that the peer-driver tests run; when the npm registry cannot be
# reached it says so and the tests go on (the node peer tests then skip, and fail under CI=true).
PEER_PKGS := python3-redis nodejs
.PHONY: peer-deps test-peer-deps node-peers bench-peers

peer-deps:
	@$(MAKE) --no-print-directory deps PKGS="$(PEER_PKGS)"
	@command -v npm >/dev/null 2>&1 || $(MAKE) --no-print-directory deps PKGS="npm"
	@$(MAKE) --no-print-directory node-peers

test-peer-deps:
	@$(MAKE) --no-print-directory deps PKGS="$(PEER_PKGS)"
	@command -v npm >/dev/null 2>&1 || $(MAKE) --no-print-directory deps PKGS="npm"
	@$(MAKE) --no-print-directory node-peers || \
	  echo "make: going on without the Node.js peers: their tests skip (CI=true: fail). When the registry is reachable: make peer-deps"

node-peers:
	@mkdir -p $(BUILD)/peers
	@if [ ! -d $(BUILD)/peers/node_modules ] || ! cmp -s harness/bench/peers/package-lock.json $(BUILD)/peers/.installed-lock; then \
	  echo "make: installing the Node.js peers (harness/bench/peers/package-lock.json) into $(BUILD)/peers"; \
	  cp harness/bench/peers/package.json harness/bench/peers/package-lock.json $(BUILD)/peers/ && \
	  (cd $(BUILD)/peers && npm ci --prefer-offline --no-audit --no-fund --loglevel=error --fetch-retries=1 --fetch-timeout=30000 </dev/null) || { \
	    echo "make: npm ci could not install the pinned Node.js peers into $(BUILD)/peers (is the npm registry reachable? try: npm ping)"; exit 1; }; \
	  cp harness/bench/peers/package-lock.json $(BUILD)/peers/.installed-lock; \
	fi

bench-peers: peer-deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target locklab
	./$(BUILD)/locklab bench-peers --peers-dir $(BUILD)/peers --out results/bench/peers.json

# The scorecard (README "Scorecard"): the lock libraries people run and locklab's own locks under
# each fault, 10 scripted two-client trials per cell, judged by `locklab check`'s checkers. Needs
# the peers (as bench-peers) and the clock shim. Writes results/bench/scorecard.json; `make plots`
# draws it (notebooks/scorecard.ipynb -> results/plots/scorecard.png). Not part of `make test`
# (its pieces are tested there).
.PHONY: scorecard
scorecard: peer-deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target locklab locklab_clockshim
	./$(BUILD)/locklab scorecard --peers-dir $(BUILD)/peers --trials 10 --out results/bench/scorecard.json

# The findability table (README "Explore"): every hand-written scenario's broken variant explored
# from scratch over 10 seeds, each fixed variant under the same budget over 3 seeds, the first seed's
# shrunk scenario replayed on real Redis. Writes results/explore/findability.json and results/explore/found/.
.PHONY: findability
findability: build
	./$(BUILD)/locklab explore --findability --fixed-seeds 3 --budget-runs 20000 --budget-s 60 --jobs 2 --confirm-real \
	  --out results/explore/findability.json
