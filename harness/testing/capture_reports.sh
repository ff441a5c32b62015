#!/usr/bin/env bash
# Captures the simulator reports of a fixed set of commands (every scenario with its variations,
# the suite, runs covering every fault kind and the retry study) for a byte-for-byte comparison
# of two builds: a refactoring must not change one byte (compare_reports.sh).
# usage: capture_reports.sh LOCKLAB_BINARY OUT_DIR   (LOCKLAB_SCENARIOS=DIR: scenario files from DIR)
set -euo pipefail
L=$1; OUT=$2; mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
q="--quiet --no-progress"
$L scenario all --backend sim --also --out-dir "$OUT/scenarios" > "$OUT/scenarios.txt" 2>&1 || echo "scenario exit $?"
$L suite --backend sim --out-dir "$OUT/suite" > "$OUT/suite.txt" 2>&1 || echo "suite exit $?"
i=0
run() { i=$((i+1)); $L run $q --out "$OUT/run-$i.json" "$@" > "$OUT/run-$i.txt" 2>&1 || echo "run $i exit $?"; }
run --algorithm token --gc-pause-ms 1500 --gc-pause-rate 0.5 --hold-ms 100
run --algorithm watchdog --gc-pause-ms 1500 --gc-pause-rate 0.5 --hold-ms 100
run --algorithm fencing --gc-pause-ms 1500 --gc-pause-rate 0.5 --hold-ms 100
run --algorithm redlock --opt fence=on --gc-pause-ms 1500 --gc-pause-rate 0.5 --hold-ms 100
run --algorithm redlock --clients 3 --requests 20 --ttl-ms 200 --gc-pause-ms 300 --gc-pause-rate 1 --net-delay-ms 2 --net-dist long-tail --clock-drift-ppm 200
run --algorithm token --net-delay-ms 5 --net-dist uniform --net-loss 0.01
run --algorithm token --net-delay-ms 5 --net-dist constant --net-loss 0.02 --retry backoff
run --algorithm timestamp --clock-skew-ms 3000 --hold-ms 100
run --algorithm timestamp:recovery=del --clock-skew-ms 3000 --clock-drift-ppm 500
run --algorithm token --fault pause_client:at_ms=50,target=0,duration_ms=1500
run --algorithm token --fault pause_client:target=0,on_send=SET,occurrence=1,duration_ms=1500
run --algorithm token --fault crash_client:target=1,on_send='*',occurrence=3
run --algorithm token --fault crash_client:at_ms=30,target=2
run --algorithm timestamp --fault client_clock_jump:at_ms=40,target=1,delta_ms=5000
run --algorithm token --fault crash_node:at_ms=100,target=0 --fault restart_node:at_ms=400,target=0
run --algorithm redlock --fault restart_node:at_ms=100,target=1 --fault pause_node:at_ms=200,target=2,duration_ms=300
run --algorithm token --fault node_clock_jump:at_ms=100,target=0,delta_ms=2000 --hold-ms 50
run --algorithm redlock --fault partition:at_ms=50,target=0,node=1,duration_ms=500 --fault node_clock_jump:at_ms=60,target=2,delta_ms=-500
run --algorithm token --replica --fault failover:at_ms=100,target=0,duration_ms=200
run --algorithm token --fault delay_message:target=0,command='*',occurrence=2,duration_ms=1500
run --algorithm token:release=del --fault delay_message:target=1,command=DEL,occurrence=1,duration_ms=1200
run --algorithm fifo --retry queue --clients 20 --requests 300
run --algorithm token --retry pubsub --clients 20 --requests 300 --gc-pause-ms 200 --gc-pause-rate 0.3
run --algorithm none --workload seckill --stock 50
run --algorithm local --app-servers 2 --workload seckill --stock 50
run --algorithm naive-expire --gc-pause-ms 1500 --gc-pause-rate 0.5
run --algorithm naive --fault crash_client:at_ms=30,target=2
run --config harness/experiments/retry-strategies.json
run --config harness/experiments/retry-fifo.json
# active expiry: the key expires untouched, the node's clock steps back, the release must not find it
run --algorithm token --clients 1 --requests 2 --ttl-ms 100 --hold-ms 300 --fault node_clock_jump:at_ms=250,target=0,delta_ms=-5000
# the locks users ask for: semaphore, reentrant, WAIT, the lock-free seckill (appended: earlier runs keep their numbers)
run --algorithm semaphore:permits=3 --gc-pause-ms 1500 --gc-pause-rate 0.5 --hold-ms 100
run --algorithm reentrant:depth=2 --gc-pause-ms 1500 --gc-pause-rate 0.5 --hold-ms 100
run --algorithm wait --fault failover:at_ms=100,target=0,duration_ms=200
run --algorithm lockfree-lua --workload seckill --stock 50
run --algorithm lockfree-watch --workload seckill --stock 50 --net-delay-ms 1
