#!/usr/bin/env node
// node_peer.js: drives a Node.js Redis lock library for `locklab bench-peers`.
//
//   node node_peer.js --lib redlock|semaphore-mutex|semaphore-redlock|sesame-redlock|universal-redlock
//        (--ports P[,P...] | --sentinels P[,P...] [--master-name NAME]) --events FILE
//        [--clients N] (--duration-ms MS | --count N) [--key K] [--key-per-client] [--ttl-ms MS]
//        [--acquire-timeout-ms MS] [--setting default|tuned] [--retry-ms MS] [--hold-ms MS]
//        [--counter-file FILE] [--announce] [--client-base B] [--deadline-ms MS] [--history-out FILE]
//        [--go-file FILE] [--release-marker] [--retry-until-timeout]
//
// Libraries (installed by `make bench-peers` into BUILD/peers/node_modules; NODE_PATH points there):
//   redlock            node-redlock 4.x: new Redlock(clients).lock(key, ttl) / lock.unlock()
//   semaphore-mutex    redis-semaphore: new Mutex(client, key, {lockTimeout}).tryAcquire() / release()
//   semaphore-redlock  redis-semaphore: new RedlockMutex(clients, key, {lockTimeout}) (several nodes)
//   sesame-redlock     @sesamecare-oss/redlock (node-redlock's maintained fork): redlock.using([key], ttl,
//                      {automaticExtensionThreshold: ttl/5}, routine): acquires, extends by itself,
//                      aborts the routine's signal when an extension fails, releases after the routine
//   universal-redlock  redlock-universal: createRedlock({adapters, key, ttl}).using(routine) (auto-extension
//                      at 80% of the TTL, the signal aborts when it fails; release errors are swallowed)
// The scorecard's hooks (locklab scorecard): --go-file FILE: connect, then wait (polling every 2 ms)
// until FILE exists before the first request; --release-marker: right before each release, send
// ECHO locklab-release-marker on each of the client's connections without waiting (a fault proxy
// can hold everything from that marker on: the release then reaches the server late);
// --retry-until-timeout: an acquisition the library gave up on is asked again (10 ms apart) until
// --acquire-timeout-ms has passed since the request began. When the library tells a holder its lock
// is lost (an aborted signal), the summary's "learned" lists it ({client, t_us, how}).
// Sentinel mode (--sentinels, the scorecard's Sentinel failover): instead of --ports, each client
// has one ioredis connection that finds the master --master-name (default locklab) through the
// sentinels on those loopback ports (ioredis' `sentinels` + `name` options, every other option at
// its default): after a failover its reconnection asks the sentinels for the new master. Not
// `failoverDetector`: with it, both clients' connections ended for good ("Connection is closed.")
// in 3 of 20 trials, a race between its disconnect and the reconnection already under way. Only
// for the single-node libraries.
// Each client has its own ioredis connection to every port (ioredis defaults). --setting default
// leaves every option of the library at its documented default except the lock's TTL and, for
// redis-semaphore, the acquire timeout (the workload's); --setting tuned sets the retry delay to
// --retry-ms (node-redlock: retryDelay, retryJitter = retry-ms/2, retryCount = what fits in the
// acquire timeout; redis-semaphore: retryInterval).
//
// Every client loops: acquire_start, acquire (the library's own retries), acquire_ok |
// acquire_fail, enter (reads the counter), yields to the event loop (or sleeps --hold-ms),
// exit (writes counter + 1), release_ok | release_fail. Requests stop when --duration-ms has
// passed since the start or when the --count pool (shared by the process's clients) is empty.
// The counter lives in this process, or in --counter-file (shared by processes: the pause test).
//
// Output: one JSON line per event in --events (t_us = CLOCK_MONOTONIC in µs, from
// process.hrtime.bigint()), written when the run ends (also on SIGTERM and on an uncaught
// exception, e.g. redis-semaphore's default onLockLost, which throws: that is recorded as a
// `crash` event of every client of the process, which then exits with status 70); with
// --announce, a line {"holding": true, ...} on stdout the first time a client enters; at the
// end one summary line on stdout; with --history-out FILE, the same events as the history
// `locklab check` judges (temp + rename). Exit status: 0 done, 2 bad arguments, 3 --deadline-ms hit,
// 70 crashed.
'use strict';

const fs = require('fs');

function usage(msg) {
  process.stderr.write(`node_peer.js: ${msg}\n`);
  process.exit(2);
}

const LIBS = ['redlock', 'semaphore-mutex', 'semaphore-redlock', 'sesame-redlock', 'universal-redlock'];

function parseArgs(argv) {
  const a = {
    lib: '', ports: [], host: '127.0.0.1', clients: 1, durationMs: 0, count: 0, key: 'locklab:peer',
    keyPerClient: false, ttlMs: 10000, acquireTimeoutMs: 10000, setting: 'default', retryMs: 10, holdMs: 0,
    counterFile: '', announce: false, clientBase: 0, events: '', deadlineMs: 60000, historyOut: '',
    goFile: '', releaseMarker: false, retryUntilTimeout: false, sentinels: [], masterName: 'locklab',
  };
  const num = (name, v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) usage(`${name} wants a number >= 0, got '${v}'`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) usage(`${k} needs a value`);
      return argv[++i];
    };
    switch (k) {
      case '--lib': a.lib = v(); break;
      case '--ports': a.ports = v().split(',').filter(Boolean).map((p) => num('--ports', p)); break;
      case '--sentinels': a.sentinels = v().split(',').filter(Boolean).map((p) => num('--sentinels', p)); break;
      case '--master-name': a.masterName = v(); break;
      case '--host': a.host = v(); break;
      case '--clients': a.clients = num(k, v()); break;
      case '--duration-ms': a.durationMs = num(k, v()); break;
      case '--count': a.count = num(k, v()); break;
      case '--key': a.key = v(); break;
      case '--key-per-client': a.keyPerClient = true; break;
      case '--ttl-ms': a.ttlMs = num(k, v()); break;
      case '--acquire-timeout-ms': a.acquireTimeoutMs = num(k, v()); break;
      case '--setting': a.setting = v(); break;
      case '--retry-ms': a.retryMs = num(k, v()); break;
      case '--hold-ms': a.holdMs = num(k, v()); break;
      case '--counter-file': a.counterFile = v(); break;
      case '--announce': a.announce = true; break;
      case '--client-base': a.clientBase = num(k, v()); break;
      case '--events': a.events = v(); break;
      case '--deadline-ms': a.deadlineMs = num(k, v()); break;
      case '--history-out': a.historyOut = v(); break;
      case '--go-file': a.goFile = v(); break;
      case '--release-marker': a.releaseMarker = true; break;
      case '--retry-until-timeout': a.retryUntilTimeout = true; break;
      default: usage(`unknown argument '${k}'`);
    }
  }
  if (!LIBS.includes(a.lib)) usage(`--lib must be one of ${LIBS.join(', ')}`);
  if ((a.ports.length === 0) === (a.sentinels.length === 0)) usage('give one of --ports and --sentinels');
  if (a.sentinels.length > 0 && !['semaphore-mutex', 'redlock'].includes(a.lib))
    usage('--sentinels is for one master: --lib semaphore-mutex or redlock');
  if (!a.masterName) usage('--master-name must not be empty');
  if (!a.events) usage('--events is required');
  if ((a.durationMs > 0) === (a.count > 0)) usage('give one of --duration-ms and --count');
  if (a.clients < 1 || a.clients > 1000) usage('--clients must be in [1, 1000]');
  if (!['default', 'tuned'].includes(a.setting)) usage('--setting must be default or tuned');
  if (a.host !== '127.0.0.1' && a.host !== 'localhost') usage('only loopback hosts');
  if (a.lib === 'semaphore-mutex' && a.ports.length > 1) usage('semaphore-mutex takes one port');
  return a;
}

const args = parseArgs(process.argv.slice(2));
const Redis = require('ioredis');

// --- Commands the clients send, by name (counted once the clients are connected). ---
const sent = {};
let counting = false;
{
  const orig = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (command, stream) {
    if (counting && command && command.name) sent[command.name] = (sent[command.name] || 0) + 1;
    return orig.call(this, command, stream);
  };
}

// --- Events. ---
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const lines = [];
function ev(client, name, extra) {
  const t = nowUs();
  let s = `{"t_us":${t},"client":${client},"ev":"${name}"`;
  if (extra !== undefined) {
    for (const [k, v] of Object.entries(extra)) s += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
  }
  lines.push(s + '}');
  if (args.historyOut) jepsen(t, client, name, extra || {});
}

// --history-out: the same events as the operations of `locklab check`'s history format (README
// "Checking any lock's history"): time in ns on CLOCK_MONOTONIC (the µs with three zeros: exact
// where a Number of ns would not be), one process per client, lock = its key.
const history = [];
function jepsen(t, c, name, e) {
  const add = (type, f, value, more) => {
    const rest = JSON.stringify(Object.assign({ type, f, value: value === undefined ? null : value }, more || {}));
    history.push([t, `{"time":${t}000,"process":${c},${rest.slice(1)}`]);
  };
  const err = e.error !== undefined ? { error: String(e.error) } : {};
  if (name === 'acquire_start') add('invoke', 'acquire', null, e.key !== undefined ? { lock: e.key } : {});
  else if (name === 'acquire_ok' || name === 'release_ok') add('ok', name.split('_')[0]);
  else if (name === 'acquire_fail' || name === 'release_fail') add('fail', name.split('_')[0], null, err);
  else if (name === 'enter' && e.read !== undefined) {
    add('invoke', 'read');
    add('ok', 'read', e.read);
  } else if (name === 'exit') {
    if (e.wrote !== undefined) {
      add('invoke', 'write', e.wrote);
      add('ok', 'write', e.wrote);
    }
    add('invoke', 'release');
  } else if (name === 'crash') add('info', 'crash', 0, e.error !== undefined ? { detail: String(e.error) } : {});
}

function writeHistory() {
  history.sort((x, y) => x[0] - y[0]);  // stable: one client's operations keep their order
  const tmp = `${args.historyOut}.tmp`;
  fs.writeFileSync(tmp, history.map((h) => h[1] + '\n').join(''));
  fs.renameSync(tmp, args.historyOut);
}

// --- The library behind one interface: acquire(client, key) -> handle | null; release(handle) -> bool. ---
function versionOf(pkg) {
  try {
    return require(`${pkg}/package.json`).version;
  } catch (e) {
    // A package whose "exports" hides its package.json: read it from the module search path.
    const dirs = (process.env.NODE_PATH || '').split(':').concat(module.paths).filter(Boolean);
    for (const d of dirs) {
      try {
        return JSON.parse(fs.readFileSync(`${d}/${pkg}/package.json`, 'utf8')).version;
      } catch (e2) {
        // next directory
      }
    }
    return 'unknown';
  }
}

// Libraries whose lock lives inside a routine (using): acquire, run, release in one call.
// using(c, key, routine(signal)) resolves after the release; it rejects before the routine ran
// (acquisition failed; *entered stays false) or after (the release failed).
function makeUsingAdapter(a, connsOf) {
  if (a.lib === 'sesame-redlock') {
    const { Redlock } = require('@sesamecare-oss/redlock');
    const opts = {};
    if (a.setting === 'tuned') Object.assign(opts, { retryDelay: a.retryMs, retryJitter: Math.floor(a.retryMs / 2) });
    // The default threshold (500 ms) must be below ttl - 100: scaled to the TTL as the default is to 30 s locks.
    const settings = { automaticExtensionThreshold: Math.max(1, Math.floor(a.ttlMs / 5)) };
    const per = [];
    return {
      name: '@sesamecare-oss/redlock', version: versionOf('@sesamecare-oss/redlock'), options: Object.assign({}, opts, settings),
      using: async (c, key, routine) => {
        if (!per[c]) per[c] = new Redlock(connsOf(c), opts);
        return await per[c].using([key], a.ttlMs, settings, (signal) => routine(signal));
      },
    };
  }
  const ru = require('redlock-universal');
  const opts = {};
  if (a.setting === 'tuned') opts.retryDelay = a.retryMs;
  return {
    name: 'redlock-universal', version: versionOf('redlock-universal'), options: opts,
    using: async (c, key, routine) => {
      const adapters = connsOf(c).map((r) => new ru.IoredisAdapter(r));
      const lock = ru.createRedlock(Object.assign({ adapters, key, ttl: a.ttlMs }, opts));
      return await lock.using((signal) => routine(signal));
    },
  };
}

function makeAdapter(a, connsOf) {
  const tuned = a.setting === 'tuned';
  if (a.lib === 'sesame-redlock' || a.lib === 'universal-redlock') return makeUsingAdapter(a, connsOf);
  if (a.lib === 'redlock') {
    const Redlock = require('redlock');
    const opts = {};
    if (tuned) {
      opts.retryDelay = a.retryMs;
      opts.retryJitter = Math.floor(a.retryMs / 2);
      opts.retryCount = Math.max(1, Math.ceil(a.acquireTimeoutMs / Math.max(1, a.retryMs)));
    }
    const per = [];
    return {
      name: 'node-redlock', version: versionOf('redlock'), options: opts,
      acquire: async (c, key) => {
        if (!per[c]) per[c] = new Redlock(connsOf(c), opts);
        return await per[c].lock(key, a.ttlMs);
      },
      release: async (lock) => {
        await lock.unlock();
        return true;
      },
    };
  }
  const sem = require('redis-semaphore');
  const opts = { lockTimeout: a.ttlMs, acquireTimeout: a.acquireTimeoutMs };
  if (tuned) opts.retryInterval = a.retryMs;
  const multi = a.lib === 'semaphore-redlock';
  return {
    name: multi ? 'redis-semaphore RedlockMutex' : 'redis-semaphore Mutex', version: versionOf('redis-semaphore'),
    options: opts,
    acquire: async (c, key) => {
      const m = multi ? new sem.RedlockMutex(connsOf(c), key, opts) : new sem.Mutex(connsOf(c)[0], key, opts);
      return (await m.tryAcquire()) ? m : null;
    },
    release: async (m) => {
      await m.release();
      return true;
    },
  };
}

// --- The counter the critical section increments. ---
let memCounter = 0;
function readCounter() {
  if (!args.counterFile) return memCounter;
  const n = parseInt(fs.readFileSync(args.counterFile, 'utf8'), 10);
  return Number.isFinite(n) ? n : 0;
}
function writeCounter(v) {
  if (!args.counterFile) memCounter = v;
  else fs.writeFileSync(args.counterFile, String(v));
}

// --- Run. ---
const stats = { acquired: 0, failed: 0, release_failed: 0, errors: [], learned: [] };
let adapter = null;
let conns = [];
let finished = false;

function noteError(e) {
  if (stats.errors.length < 5) stats.errors.push(String((e && e.message) || e).slice(0, 200));
}

function finish(code, crashed) {
  if (finished) return;
  finished = true;
  try {
    fs.writeFileSync(args.events, lines.length ? lines.join('\n') + '\n' : '');
    if (args.historyOut) writeHistory();
  } catch (e) {
    process.stderr.write(`node_peer.js: cannot write ${args.events}: ${e.message}\n`);
    code = code || 1;
  }
  const summary = {
    summary: true, lib: adapter ? adapter.name : args.lib, version: adapter ? adapter.version : 'unknown',
    ioredis: versionOf('ioredis'), setting: args.setting, options: adapter ? adapter.options : {},
    clients: args.clients, acquired: stats.acquired, failed: stats.failed, release_failed: stats.release_failed,
    counter_final: args.counterFile ? null : memCounter, commands_sent: sent,
    commands_sent_total: Object.values(sent).reduce((x, y) => x + y, 0), events: lines.length,
    errors: stats.errors, learned: stats.learned, crashed: crashed || null, exit: code,
  };
  process.stdout.write(JSON.stringify(summary) + '\n');
  for (const r of conns) r.disconnect();
  process.exit(code);
}

process.on('SIGTERM', () => finish(143, 'SIGTERM'));
process.on('uncaughtException', (e) => {
  // The library threw outside our calls (redis-semaphore's default onLockLost does).
  const msg = String((e && e.message) || e).slice(0, 200);
  for (let c = 0; c < args.clients; c++) ev(args.clientBase + c, 'crash', { error: msg });
  finish(70, msg);
});
process.on('unhandledRejection', (e) => {
  const msg = String((e && e.message) || e).slice(0, 200);
  for (let c = 0; c < args.clients; c++) ev(args.clientBase + c, 'crash', { error: msg });
  finish(70, msg);
});

async function main() {
  const hardStop = setTimeout(() => finish(3, `deadline of ${args.deadlineMs} ms`), args.deadlineMs);
  const perClient = [];
  for (let c = 0; c < args.clients; c++) {
    const list = args.sentinels.length > 0
      ? [new Redis({ sentinels: args.sentinels.map((port) => ({ host: args.host, port })), name: args.masterName })]
      : args.ports.map((port) => new Redis({ host: args.host, port }));
    perClient.push(list);
    conns.push(...list);
  }
  adapter = makeAdapter(args, (c) => perClient[c]);
  await Promise.all(conns.map((r) => r.ping()));
  if (args.goFile) {
    process.stdout.write('{"ready":true}\n');
    for (let i = 0; i < 10000000 && !fs.existsSync(args.goFile); i++) await new Promise((r) => setTimeout(r, 2));
  }
  counting = true;

  const start = nowUs();
  const endAt = start + args.durationMs * 1000;
  let remaining = args.count;
  let announced = false;
  const yieldNow = () => new Promise((resolve) => setImmediate(resolve));
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  const msgOf = (e) => String((e && e.message) || e).slice(0, 200);
  const timedOut = (startUs) => nowUs() - startUs >= args.acquireTimeoutMs * 1000;

  // The library's acquisition; with --retry-until-timeout asked again until the acquire timeout.
  const lastError = [];  // per client: why its last acquisition attempt threw
  async function acquire(local, key, startUs) {
    lastError[local] = '';
    for (let i = 0; i < 100000; i++) {
      let h = null;
      try {
        h = await adapter.acquire(local, key);
      } catch (e) {
        noteError(e);
        lastError[local] = msgOf(e);
      }
      if (h || !args.retryUntilTimeout || timedOut(startUs)) return h;
      await sleep(10);
    }
    return null;
  }

  // Holding: enter (reads the counter), the hold, exit (writes it), the release marker.
  async function criticalSection(c, local) {
    stats.acquired++;
    ev(c, 'acquire_ok');
    const v = readCounter();
    ev(c, 'enter', { read: v });
    if (args.announce && !announced) {
      announced = true;
      process.stdout.write(JSON.stringify({ holding: true, client: c, t_us: nowUs() }) + '\n');
    }
    if (args.holdMs > 0) await sleep(args.holdMs);
    else await yieldNow();
    writeCounter(v + 1);
    ev(c, 'exit', { wrote: v + 1 });
    if (args.releaseMarker) {
      for (const r of perClient[local]) r.echo('locklab-release-marker').catch(() => {});
    }
  }

  // One request of a library with using(): the routine is the critical section.
  async function usingRequest(c, local, key, startUs) {
    let entered = false;
    for (let i = 0; i < 100000; i++) {
      try {
        await adapter.using(local, key, async (signal) => {
          entered = true;
          signal.addEventListener('abort', () => {
            stats.learned.push({ client: c, t_us: nowUs(), how: `signal aborted: ${msgOf(signal.error)}` });
          });
          await criticalSection(c, local);
        });
        ev(c, 'release_ok');
        return;
      } catch (e) {
        noteError(e);
        if (entered) {
          stats.release_failed++;
          ev(c, 'release_fail', { error: msgOf(e) });
          return;
        }
        if (!args.retryUntilTimeout || timedOut(startUs)) break;
        await sleep(10);
      }
    }
    stats.failed++;
    ev(c, 'acquire_fail');
  }

  async function client(local) {
    const c = args.clientBase + local;
    const key = args.keyPerClient ? `${args.key}:${c}` : args.key;
    for (;;) {
      if (args.durationMs > 0 ? nowUs() >= endAt : remaining <= 0) return;
      if (args.count > 0) remaining--;
      const startUs = nowUs();
      ev(c, 'acquire_start', { key });
      if (adapter.using) {
        await usingRequest(c, local, key, startUs);
        continue;
      }
      const h = await acquire(local, key, startUs);
      if (!h) {
        stats.failed++;
        ev(c, 'acquire_fail', lastError[local] ? { error: lastError[local] } : undefined);
        continue;
      }
      await criticalSection(c, local);
      let ok = false;
      let why = '';
      try {
        ok = await adapter.release(h);
      } catch (e) {
        noteError(e);
        why = msgOf(e);
      }
      if (!ok) stats.release_failed++;
      ev(c, ok ? 'release_ok' : 'release_fail', why ? { error: why } : undefined);
    }
  }

  const loops = [];
  for (let c = 0; c < args.clients; c++) loops.push(client(c));
  await Promise.all(loops);
  clearTimeout(hardStop);
  finish(0, null);
}

main().catch((e) => {
  noteError(e);
  process.stderr.write(`node_peer.js: ${(e && e.stack) || e}\n`);
  finish(1, null);
});
