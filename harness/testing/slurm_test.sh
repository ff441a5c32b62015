#!/bin/sh
# A sweep sharded as a Slurm job array merges into exactly the unsharded sweep's bytes.
# Brings up a one-node Slurm on this machine (munged, slurmctld and slurmd on 127.0.0.1, a
# generated slurm.conf and munge key in a temporary directory, ports 16817/16818), submits
# --array=1-3 (SLURM_ARRAY_TASK_ID -> --shard I/3), waits, merges, compares, and always stops
# every daemon it started (trap). Needs root and Debian's slurmd, slurmctld, slurm-client and
# munge (`make test-slurm` installs them).
# usage: slurm_test.sh LOCKLAB_BINARY     (exit 77: not root or Slurm not installed: skipped)
set -eu
L=$(readlink -f "$1")
if [ "$(id -u)" != 0 ]; then echo "slurm_test: needs root (it runs slurmd): skipped"; exit 77; fi
for p in munged slurmctld slurmd sbatch squeue scancel; do
  command -v $p >/dev/null 2>&1 || { echo "slurm_test: $p not installed: skipped"; exit 77; }
done
T=$(mktemp -d /tmp/locklab_slurm.XXXXXX)
chmod 755 "$T"
PIDS=""
cleanup() {
  set +e
  # A job still queued or running is cancelled before its slurmd goes.
  [ -s "$T/jobid" ] && SLURM_CONF="$T/slurm.conf" scancel --quiet "$(cut -d';' -f1 "$T/jobid")" 2>/dev/null
  # slurmd's slurmstepd children end after their job: at most 10 s, so none is left orphaned.
  i=0; while [ -n "${SLURMD:-}" ] && pgrep -P "$SLURMD" >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  for p in $PIDS; do kill "$p" 2>/dev/null; done
  for p in $PIDS; do  # at most 10 s each, then SIGKILL
    i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
    kill -9 "$p" 2>/dev/null
  done
  if [ "${KEEP_SLURM_TMP:-}" = "" ]; then rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() { echo "slurm_test: $*"; for f in "$T"/*.log; do echo "--- $f"; tail -20 "$f"; done; exit 1; }

# munge: a fresh key, our own socket.
mkdir -p "$T/munge"; chmod 711 "$T/munge"  # the socket must be reachable
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null; chmod 400 "$T/munge/munge.key"
munged --foreground --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" \
  --pid-file="$T/munge/munged.pid" --seed-file="$T/munge/munge.seed" --log-file="$T/munged.log" \
  > "$T/munged.out.log" 2>&1 &
PIDS="$! $PIDS"
i=0; while [ ! -S "$T/munge/munge.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
[ -S "$T/munge/munge.sock" ] || fail "munged did not start"

H=$(hostname -s)
mkdir -p "$T/state" "$T/spool" "$T/work"
cat > "$T/slurm.conf" <<CONF
ClusterName=locklabtest
SlurmctldHost=$H(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=10 State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" > "$T/slurmctld.out.log" 2>&1 &
PIDS="$! $PIDS"
slurmd -D -f "$SLURM_CONF" > "$T/slurmd.out.log" 2>&1 &
SLURMD=$!
PIDS="$! $PIDS"
i=0; until sinfo -h -o %T 2>/dev/null | grep -qE "^idle"; do
  i=$((i+1)); [ $i -lt 300 ] || fail "the node did not come up"; sleep 0.1
done

cd "$T/work"
cat > sweep.json <<'JSON'
{"algorithms": ["token", "redlock"], "clients": 3, "requests": 20, "ttl_ms": 200,
 "faults": {"gc_pause_ms": 300, "gc_pause_rate": 1, "net_delay_ms": 2, "net_dist": "long-tail"},
 "seeds": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
JSON
cat > shard.sh <<SH
#!/bin/sh
exec "$L" run --config sweep.json --quiet --no-progress --jobs 1 --shard \${SLURM_ARRAY_TASK_ID}/3 \\
  --out part-\${SLURM_ARRAY_TASK_ID}.json --results part-\${SLURM_ARRAY_TASK_ID}.jsonl
SH
chmod +x shard.sh
"$L" run --config sweep.json --quiet --no-progress --jobs 1 --out all.json --results all.jsonl > /dev/null
sbatch --parsable --array=1-3 --chdir="$T/work" --output="$T/work/slurm-%A_%a.out" --time=5 shard.sh > "$T/jobid" ||
  fail "sbatch failed"
JOB=$(cut -d';' -f1 "$T/jobid")
i=0; while [ -n "$(squeue -h -j "$JOB" 2>/dev/null)" ]; do
  i=$((i+1)); [ $i -lt 1200 ] || fail "job $JOB did not finish in 120 s"; sleep 0.1
done
for s in 1 2 3; do [ -s part-$s.jsonl ] || { cat slurm-*.out; fail "array task $s wrote no results"; }; done
"$L" merge merged.json part-1.json part-2.json part-3.json > /dev/null
"$L" merge merged.jsonl part-1.jsonl part-2.jsonl part-3.jsonl > /dev/null
cmp all.json merged.json || fail "merged report differs"
cmp all.jsonl merged.jsonl || fail "merged results differ"
echo "Slurm: job array $JOB (3 tasks) of $(wc -l < all.jsonl) runs merged: byte-identical to the unsharded sweep"
