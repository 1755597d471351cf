// @ts-check
// The worker thread that owns a test worker's connection to its client host (host-main.ts).
// The test worker's main thread posts every request here, in order; requests that must be
// answered at once (a constructor, a getter, an observer's count) are answered through a
// SharedArrayBuffer the main thread waits on with Atomics.wait, so the tests keep their
// synchronous reads; everything else (call outcomes, escaped errors, the host's exit) is
// posted back as a message. The host's own stdout and stderr are the worker's: the
// submission's console output shows where a test's does, and never mixes with the protocol.
// A bridge started as its test worker starts (early-bridge.mjs) has no host to start yet: it
// waits for its first message, {t: "start", command, env, cwd, maxLine}, and only then starts it.
import { readFileSync, readlinkSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { startHost } from "./launch.mjs";

/** @typedef {{ command: string[], env: Record<string,string>, cwd: string, maxLine: number, answerMs?: number }} StartRequest */
/** @type {{ sab: SharedArrayBuffer } & Partial<StartRequest>} */
const { sab } = workerData;
const control = new Int32Array(sab, 0, 2);
const data = new Uint8Array(sab, 8);
const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);

/** @type {import("./launch.mjs").Host} */
let host;
/** @type {Set<number>} */
const syncSeqs = new Set();
// The host's stderr passes through to the worker's; its last bytes are kept to tell an
// out-of-memory death from another.
let stderrTail = "";
let stderrEnded = false;
let ended = false;
/** @type {{ code: number | null, signal: string | null, oom: boolean } | undefined} */
let exit;

/** CPU (ms) a synchronous request may cost the host before it is called stuck. */
let budgetMs = 5_000;
/** The host's pid as this thread sees it, once known. */
/** @type {number | undefined} */
let hostPid;
/** @type {ReturnType<typeof setInterval> | undefined} */
let watch;
const WATCH_MS = 100;
const USER_HZ = 100;

if (workerData.command) start(/** @type {StartRequest} */ (workerData));
else port.once("message", (/** @type {StartRequest} */ request) => start(request));

// This thread's id as the kernel numbers it (Linux: /proc/thread-self is "<pid>/task/<tid>"),
// so the hang detectors' clock can read how long it waited for a CPU (client-side.ts).
function ownThreadId() {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    return Number.isSafeInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/** @param {StartRequest} request */
function start({ command, env, cwd, maxLine, answerMs }) {
  if (typeof answerMs === "number" && answerMs > 0) budgetMs = answerMs;
  // Through the sandbox's launcher where it offers one (the host in namespaces of its own),
  // else a plain child (launch.mjs).
  host = startHost({ command, env, cwd }, (pid, nsPid, init) => {
    hostPid = pid;
    port.postMessage({ t: "pid", pid, nsPid, init, bridgeTid: ownThreadId() });
  });
  host.stderr.on("data", (/** @type {Buffer} */ chunk) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk.toString("utf8")).slice(-4096);
  });
  readHost(maxLine);
  host.stderr.on("end", () => (stderrEnded = true));
  host.onExit((code, signal) => void onHostExit(code, signal));
  port.on("message", onRequest);
}

/** The synchronous request (its seq) the main thread waits on now; 0 when none. The main
 *  thread posts one only once the last has ended (answered, or given up on), so a newer one
 *  makes every older one stale. */
let waitingSeq = 0;

// Answers the main thread's one outstanding synchronous request, `seq`: the answer, then the
// seq in the control word (what the main thread waits to see). An answer to any other request
// is dropped: it comes after the main thread gave up on it (a signal the launcher delivered
// late), and written now it would be read as the answer to the request it waits on.
function answer(/** @type {string} */ line, /** @type {number} */ seq) {
  if (seq !== waitingSeq) return;
  waitingSeq = 0;
  const bytes = Buffer.from(line, "utf8");
  const body = bytes.length <= data.length ? bytes : Buffer.from(JSON.stringify({ t: "reply", ok: false, error: { mcp: false, message: "the host's answer is too large" } }));
  data.set(body);
  Atomics.store(control, 1, body.length);
  Atomics.store(control, 0, seq);
  Atomics.notify(control, 0);
}

/** What the host may say: a call's outcome, a synchronous answer, a callback, an escaped error. */
const HOST_SAYS = new Set(["settled", "reply", "callback", "escaped"]);

// The host's lines: the answer the main thread waits for goes through the shared buffer,
// the other kinds it may send are posted.
function readHost(/** @type {number} */ maxLine) {
  const socket = host.socket;
  let buffer = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk) => {
    buffer += chunk;
    if (buffer.length > maxLine && buffer.indexOf("\n") === -1) {
      buffer = "";
      port.postMessage({ t: "fault", message: `the client's host sent a line over ${maxLine} bytes` });
      host.kill();
      return;
    }
    let newline;
    while ((newline = buffer.indexOf("\n")) !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        port.postMessage({ t: "fault", message: "the client's host sent a line that is not JSON" });
        continue;
      }
      if (message?.t === "reply" && syncSeqs.has(message.seq)) {
        syncSeqs.delete(message.seq);
        stopWatch();
        answer(line, message.seq);
      } else if (HOST_SAYS.has(message?.t)) port.postMessage(message);
      // (Anything else is dropped: "pid", "exit" and "fault" are this bridge's words about the
      // host, never the host's. A host that says them, a forged exit to pass the drain check or
      // pids for the worker to kill, is not heard.)
    }
  });
  socket.on("error", () => {});
}

async function onHostExit(/** @type {number | null} */ code, /** @type {string | null} */ signal) {
  // V8's last words ("heap out of memory") may still be in the pipe: read to its end, which
  // comes with the process's death unless something it started holds it open (then 1 s).
  if (!stderrEnded) {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 1_000);
      host.stderr.once("end", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
  }
  ended = true;
  exit = { code, signal, oom: /heap out of memory|Allocation failed/i.test(stderrTail) };
  port.postMessage({ t: "exit", ...exit });
  if (syncSeqs.size > 0) {
    const seqs = [...syncSeqs];
    syncSeqs.clear();
    stopWatch();
    for (const seq of seqs) answer(JSON.stringify({ t: "reply", ok: false, gone: true, exit }), seq);
  }
}

function onRequest(/** @type {any} */ message) {
  if (message.t === "stop") {
    host.kill();
    return;
  }
  // A signal for a process of the host's (through the launcher): answered at once.
  if (message.t === "signal") {
    waitingSeq = message.seq;
    host.signal(message.pid, message.signal, (error) => answer(JSON.stringify({ t: "reply", ok: true, error }), message.seq));
    return;
  }
  // A batch is one line: the host handles all of it in one turn of its event loop.
  const messages = message.t === "batch" ? message.messages : [message];
  for (const each of messages) {
    if (each.sync) {
      syncSeqs.add(each.seq);
      waitingSeq = each.seq;
    }
    if (each.sync && !ended) watchSync(each.seq);
    if (!ended) continue;
    if (each.sync) answer(JSON.stringify({ t: "reply", ok: false, gone: true, exit }), each.seq);
    else port.postMessage({ t: "settled", seq: each.seq, ok: false, gone: true, exit });
  }
  if (!ended) host.write(`${JSON.stringify(message)}\n`);
}

// A synchronous request the host does not answer. The main thread cannot tell a host that
// loops from one that is merely slow on a loaded machine, so the judgement is made here, from
// the host's own CPU time (/proc/<pid>/stat), which load does not inflate:
// - "busy": the host spent `budgetMs` of CPU since the request without answering (a loop
//   that never yields);
// - "blocked": over the last `budgetMs` of wall time it used almost no CPU (under 1 %: a
//   synchronous wait that never ends; a host starved by load still gets its share);
// - without a readable /proc (not Linux) the wall clock stands in for the CPU clock;
// - and whatever the clocks say, six times `budgetMs` of wall time is the end ("slow").
// The answer `{ stuck, ms, cpuMs }` ends the request; the main thread then stops the host.

/** The host's CPU time so far (ms; user and system, all its threads), or undefined when unreadable. */
function hostCpuMs() {
  if (hostPid === undefined || hostPid <= 0) return undefined;
  try {
    const stat = readFileSync(`/proc/${hostPid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

function watchSync(/** @type {number} */ seq) {
  stopWatch();
  const since = Date.now();
  /** @type {Array<{ at: number, cpu: number }>} the CPU readings, oldest first */
  const readings = [];
  /** @type {number | undefined} */
  let firstCpu;
  const unreadable = process.platform !== "linux";
  watch = setInterval(() => {
    if (!syncSeqs.has(seq)) return stopWatch();
    const now = Date.now();
    const wall = now - since;
    const cpu = hostCpuMs();
    /** @type {"busy" | "blocked" | "slow" | undefined} */
    let stuck;
    let ms = budgetMs;
    if (cpu !== undefined) {
      firstCpu ??= cpu;
      readings.push({ at: now, cpu });
      while (readings.length > 1 && now - (readings[1]?.at ?? now) >= budgetMs) readings.shift();
      const oldest = readings[0] ?? { at: now, cpu };
      if (cpu - firstCpu >= budgetMs) stuck = "busy";
      else if (now - oldest.at >= budgetMs && cpu - oldest.cpu < budgetMs / 100) stuck = "blocked";
    } else if (unreadable && wall >= budgetMs) stuck = "busy";
    // (Neither of the above: the host used some CPU, too little to call it busy, on a machine
    // too loaded to call it blocked. Said as it is: slow, with the CPU it did use.)
    if (!stuck && wall >= budgetMs * 6) {
      stuck = "slow";
      ms = wall;
    }
    if (!stuck) return;
    syncSeqs.delete(seq);
    stopWatch();
    const used = cpu !== undefined && firstCpu !== undefined ? Math.round(cpu - firstCpu) : undefined;
    answer(JSON.stringify({ t: "reply", ok: false, stuck, ms, ...(used === undefined ? {} : { cpuMs: used }) }), seq);
  }, WATCH_MS);
}

function stopWatch() {
  if (watch !== undefined) clearInterval(watch);
  watch = undefined;
}
