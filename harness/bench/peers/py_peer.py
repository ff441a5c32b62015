#!/usr/bin/python3
"""py_peer.py: drives redis-py's Lock (Debian's python3-redis) for `locklab bench-peers`.

  /usr/bin/python3 py_peer.py (--ports P | --sentinels P[,P...] [--master-name NAME]) --events FILE
      [--clients N] (--duration-ms MS | --count N)
      [--key K] [--key-per-client] [--ttl-ms MS] [--acquire-timeout-ms MS] [--setting default|tuned]
      [--retry-ms MS] [--hold-ms MS] [--counter-file FILE] [--announce] [--client-base B]
      [--deadline-ms MS] [--history-out FILE] [--go-file FILE] [--release-marker] [--retry-until-timeout]

Each client is a thread with its own redis.Redis connection (redis-py defaults) and its own
Lock: client.lock(key, timeout=ttl, blocking_timeout=acquire timeout). Sentinel mode (--sentinels,
the scorecard's Sentinel failover): instead of --ports, each client's connection is
redis.sentinel.Sentinel([sentinels]).master_for(--master-name, default locklab), which asks the
sentinels for the master whenever it (re)connects (redis-py defaults otherwise). --setting default keeps
the Lock's documented defaults otherwise (sleep=0.1 s between attempts); --setting tuned sets
sleep to --retry-ms. redis-py's Lock talks to one server (there is no Redlock in redis-py).

Every client loops: acquire_start, lock.acquire(), acquire_ok | acquire_fail, enter (reads the
counter), time.sleep(0) (or --hold-ms), exit (writes counter + 1), lock.release() ->
release_ok | release_fail (LockNotOwnedError and the like). Requests stop when --duration-ms
has passed or when the --count pool (shared by the process's clients) is empty. The counter
lives in this process, or in --counter-file (shared by processes: the pause test).

The scorecard's hooks (locklab scorecard): --go-file FILE: connect, print {"ready": true}, then wait (polling every 2 ms)
until FILE exists before the first request; --release-marker: right before each release, send
ECHO locklab-release-marker on the lock's connection (a fault proxy can hold everything from that
marker on: the release then reaches the server late); --retry-until-timeout: an acquire that raised (a connection lost in a failover:
redis-py's blocking_timeout retries only refusals) is asked again, 10 ms apart, with what is left of
the acquire timeout as its blocking_timeout.

Output: one JSON line per event in --events (t_us = CLOCK_MONOTONIC in µs, time.monotonic_ns()),
written when the run ends (also on SIGTERM); with --announce, a line {"holding": true, ...} on
stdout the first time a client enters; at the end one summary line on stdout. With
--history-out FILE, the same events as the history `locklab check` judges (temp + rename). Exit status: 0
done, 2 bad arguments, 3 --deadline-ms hit.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time

import redis
import redis.sentinel


def now_us():
    return time.monotonic_ns() // 1000


def parse_args():
    p = argparse.ArgumentParser(prog="py_peer.py")
    p.add_argument("--ports", default="")
    p.add_argument("--sentinels", default="")
    p.add_argument("--master-name", default="locklab")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--events", required=True)
    p.add_argument("--clients", type=int, default=1)
    p.add_argument("--duration-ms", type=int, default=0)
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--key", default="locklab:peer")
    p.add_argument("--key-per-client", action="store_true")
    p.add_argument("--ttl-ms", type=int, default=10000)
    p.add_argument("--acquire-timeout-ms", type=int, default=10000)
    p.add_argument("--setting", choices=["default", "tuned"], default="default")
    p.add_argument("--retry-ms", type=int, default=10)
    p.add_argument("--hold-ms", type=int, default=0)
    p.add_argument("--counter-file", default="")
    p.add_argument("--announce", action="store_true")
    p.add_argument("--client-base", type=int, default=0)
    p.add_argument("--deadline-ms", type=int, default=60000)
    p.add_argument("--history-out", default="")
    p.add_argument("--go-file", default="")
    p.add_argument("--release-marker", action="store_true")
    p.add_argument("--retry-until-timeout", action="store_true")
    a = p.parse_args()
    try:
        ports = [int(x) for x in a.ports.split(",") if x]
        a.sentinel_ports = [int(x) for x in a.sentinels.split(",") if x]
    except ValueError:
        p.error("--ports and --sentinels take port numbers")
    if bool(ports) == bool(a.sentinel_ports):
        p.error("give one of --ports and --sentinels")
    if a.sentinel_ports and not a.master_name:
        p.error("--master-name must not be empty")
    if not a.sentinel_ports and len(ports) != 1:
        p.error("redis-py's Lock takes one port")
    a.port = ports[0] if ports else 0
    if (a.duration_ms > 0) == (a.count > 0):
        p.error("give one of --duration-ms and --count")
    if not 1 <= a.clients <= 1000:
        p.error("--clients must be in [1, 1000]")
    if a.host not in ("127.0.0.1", "localhost"):
        p.error("only loopback hosts")
    return a


ARGS = parse_args()

# Commands the clients send, by name: every redis-py command goes through execute_command.
_local = threading.local()
_all_counts = []
_counts_lock = threading.Lock()
_orig_execute = redis.Redis.execute_command


def _counted_execute(self, *args, **options):
    counts = getattr(_local, "counts", None)
    if counts is not None and args:
        name = str(args[0]).split(" ")[0].lower()
        counts[name] = counts.get(name, 0) + 1
    return _orig_execute(self, *args, **options)


redis.Redis.execute_command = _counted_execute

lines = []  # list.append is atomic under the GIL
state = {"acquired": 0, "failed": 0, "release_failed": 0, "errors": [], "remaining": ARGS.count,
         "announced": False}
state_lock = threading.Lock()
counter = {"value": 0}
finished = threading.Event()
finish_lock = threading.Lock()


def ev(client, name, **extra):
    t = now_us()
    s = '{"t_us":%d,"client":%d,"ev":"%s"' % (t, client, name)
    for k, v in extra.items():
        s += ",%s:%s" % (json.dumps(k), json.dumps(v))
    lines.append(s + "}")
    if ARGS.history_out:
        jepsen(t, client, name, extra)


# --history-out: the same events as the operations of `locklab check`'s history format (README
# "Checking any lock's history"): time in ns on CLOCK_MONOTONIC, one process per client, lock =
# its key.
history = []


def jepsen(t, c, name, e):
    def add(typ, f, value=None, **more):
        d = {"time": t * 1000, "process": c, "type": typ, "f": f, "value": value}
        d.update(more)
        history.append((t, json.dumps(d)))

    err = {"error": str(e["error"])} if "error" in e else {}
    if name == "acquire_start":
        add("invoke", "acquire", **({"lock": e["key"]} if "key" in e else {}))
    elif name in ("acquire_ok", "release_ok"):
        add("ok", name.split("_")[0])
    elif name in ("acquire_fail", "release_fail"):
        add("fail", name.split("_")[0], **err)
    elif name == "enter" and "read" in e:
        add("invoke", "read")
        add("ok", "read", e["read"])
    elif name == "exit":
        if "wrote" in e:
            add("invoke", "write", e["wrote"])
            add("ok", "write", e["wrote"])
        add("invoke", "release")
    elif name == "crash":
        add("info", "crash", 0, **({"detail": str(e["error"])} if "error" in e else {}))


def write_history():
    ordered = sorted(list(history), key=lambda h: h[0])  # stable: a client's operations keep their order
    tmp = ARGS.history_out + ".tmp"
    with open(tmp, "w") as f:
        f.write("".join(line + "\n" for _, line in ordered))
    os.replace(tmp, ARGS.history_out)


def note_error(e):
    with state_lock:
        if len(state["errors"]) < 5:
            state["errors"].append(("%s: %s" % (type(e).__name__, e))[:200])


def read_counter():
    if not ARGS.counter_file:
        return counter["value"]
    try:
        with open(ARGS.counter_file) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def write_counter(v):
    if not ARGS.counter_file:
        counter["value"] = v
        return
    with open(ARGS.counter_file, "w") as f:
        f.write(str(v))


def lock_options():
    o = {"timeout": ARGS.ttl_ms / 1000.0, "blocking_timeout": ARGS.acquire_timeout_ms / 1000.0}
    if ARGS.setting == "tuned":
        o["sleep"] = ARGS.retry_ms / 1000.0
    return o


def finish(code, crashed=None):
    with finish_lock:
        if finished.is_set():
            return
        finished.set()
        try:
            with open(ARGS.events, "w") as f:
                f.write("".join(l + "\n" for l in list(lines)))
            if ARGS.history_out:
                write_history()
        except OSError as e:
            sys.stderr.write("py_peer.py: cannot write %s: %s\n" % (ARGS.events, e))
            code = code or 1
        sent = {}
        with _counts_lock:
            for c in _all_counts:
                for k, v in list(c.items()):
                    sent[k] = sent.get(k, 0) + v
        summary = {
            "summary": True, "lib": "redis-py Lock", "version": redis.__version__, "setting": ARGS.setting,
            "options": lock_options(), "clients": ARGS.clients, "acquired": state["acquired"],
            "failed": state["failed"], "release_failed": state["release_failed"],
            "counter_final": None if ARGS.counter_file else counter["value"], "commands_sent": sent,
            "commands_sent_total": sum(sent.values()), "events": len(lines), "errors": state["errors"],
            "learned": [], "crashed": crashed, "exit": code,
        }
        sys.stdout.write(json.dumps(summary) + "\n")
        sys.stdout.flush()
        os._exit(code)


def wait_for_go_file():
    for _ in range(10_000_000):  # the --deadline-ms timer ends the process long before
        if not ARGS.go_file or os.path.exists(ARGS.go_file):
            return
        time.sleep(0.002)


def connect():
    if not ARGS.sentinel_ports:
        return redis.Redis(host=ARGS.host, port=ARGS.port)
    sentinel = redis.sentinel.Sentinel([(ARGS.host, p) for p in ARGS.sentinel_ports])
    return sentinel.master_for(ARGS.master_name)


def acquire(lock, start_us):
    """lock.acquire(); with --retry-until-timeout, asked again after an exception until the timeout."""
    timeout_us = ARGS.acquire_timeout_ms * 1000
    for _ in range(100_000):
        try:
            left_s = max(0.0, (start_us + timeout_us - now_us()) / 1e6)
            return lock.acquire(blocking_timeout=left_s) if ARGS.retry_until_timeout else lock.acquire()
        except Exception as e:  # noqa: BLE001 - a lost connection: reported in the summary
            note_error(e)
        if not ARGS.retry_until_timeout or now_us() - start_us >= timeout_us:
            return False
        time.sleep(0.01)
    return False


def client_thread(local_id, ready, start, start_box):
    c = ARGS.client_base + local_id
    key = "%s:%d" % (ARGS.key, c) if ARGS.key_per_client else ARGS.key
    try:
        r = connect()
        r.ping()
        lock = r.lock(key, **lock_options())
    except Exception as e:  # noqa: BLE001 - reported in the summary
        note_error(e)
        ready.wait()
        start.wait()
        return
    ready.wait()
    start.wait()
    wait_for_go_file()
    _local.counts = {}
    with _counts_lock:
        _all_counts.append(_local.counts)
    end_at = start_box[0] + ARGS.duration_ms * 1000
    while not finished.is_set():
        if ARGS.duration_ms > 0:
            if now_us() >= end_at:
                return
        else:
            with state_lock:
                if state["remaining"] <= 0:
                    return
                state["remaining"] -= 1
        ev(c, "acquire_start", key=key)
        ok = acquire(lock, now_us())
        if not ok:
            with state_lock:
                state["failed"] += 1
            ev(c, "acquire_fail")
            continue
        with state_lock:
            state["acquired"] += 1
        ev(c, "acquire_ok")
        v = read_counter()
        ev(c, "enter", read=v)
        if ARGS.announce:
            with state_lock:
                first = not state["announced"]
                state["announced"] = True
            if first:
                sys.stdout.write(json.dumps({"holding": True, "client": c, "t_us": now_us()}) + "\n")
                sys.stdout.flush()
        time.sleep(ARGS.hold_ms / 1000.0 if ARGS.hold_ms > 0 else 0)
        write_counter(v + 1)
        ev(c, "exit", wrote=v + 1)
        why = None
        try:
            if ARGS.release_marker:
                r.echo("locklab-release-marker")
            lock.release()
        except Exception as e:  # noqa: BLE001 - LockNotOwnedError: the lock was no longer ours
            note_error(e)
            why = ("%s: %s" % (type(e).__name__, e))[:200]
        if why is None:
            ev(c, "release_ok")
            continue
        with state_lock:
            state["release_failed"] += 1
        ev(c, "release_fail", error=why)


def main():
    signal.signal(signal.SIGTERM, lambda *_: finish(143, "SIGTERM"))
    deadline = threading.Timer(ARGS.deadline_ms / 1000.0, lambda: finish(3, "deadline of %d ms" % ARGS.deadline_ms))
    deadline.daemon = True
    deadline.start()
    ready = threading.Barrier(ARGS.clients + 1)
    start = threading.Barrier(ARGS.clients + 1)
    start_box = [0]
    threads = [threading.Thread(target=client_thread, args=(i, ready, start, start_box), daemon=True)
               for i in range(ARGS.clients)]
    for t in threads:
        t.start()
    ready.wait()  # every client connected (or failed to)
    if ARGS.go_file:
        sys.stdout.write('{"ready": true}\n')
        sys.stdout.flush()
    start_box[0] = now_us()
    start.wait()
    for t in threads:
        t.join()
    finish(0)


if __name__ == "__main__":
    main()
