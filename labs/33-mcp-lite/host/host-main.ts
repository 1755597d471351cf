// The client's host process: the only process of a grade that loads the submission's code.
// `node --import tsx host-main.ts <entry>`, started by the test worker's bridge (bridge.mjs)
// with fd 3 a socket to it. The host installs the in-process observers first (timers, abort
// listeners, the processes it starts, guarded stack traces), then the resolution guard,
// then imports the submission, and from then on does only what the worker asks: make
// clients, call their methods, read their getters, abort the signals it mirrors, and report
// what its observers count. Its answers are one observer among several: the worker checks
// the wire (the fixture's log) and the processes itself.

import { Socket } from "node:net";
import { pathToFileURL } from "node:url";
import { abortListeners, clientTimerDelays, untracked, guardStackTraces, installTimerTracker, liveClientTimeoutListeners, liveClientTimers, stillness, timerSnapshot } from "../tests/observers.ts";
import { processesStarted, resetSpawnCalls, spawnCalls, startedCount } from "../probes/spawn-recorder.ts";
import { encodeError as encodeRaw, encodeValue, unpackArgs } from "./wire.ts";
import { sourcePositions } from "./source-positions.ts";

installTimerTracker();
guardStackTraces();

const realExit = process.exit.bind(process);
// As in a vitest worker: a client that calls process.exit fails the call that made it.
process.exit = ((code?: number | string | null) => {
  throw new Error(`process.exit unexpectedly called with "${code ?? process.exitCode ?? 0}"`);
}) as typeof process.exit;

const socket = new Socket({ fd: 3, readable: true, writable: true });
// The host's own writes are not the client's activity: not tracked (and not traced, which
// would cost a stack capture per message).
const send = (message: object): void => untracked(() => void socket.write(`${JSON.stringify(message)}\n`));
// Lines sent that the worker receives as messages (everything but the answers it waits for
// synchronously): a still host is still only once the worker has received all of them.
let posted = 0;
const post = (message: object): void => {
  posted += 1;
  send(message);
};
// What escapes the client (an uncaught exception, an unhandled rejection) goes to the worker,
// which raises it there, where the test runner sees it as it would in-process.
const escaped = (kind: string) => (error: unknown) => post({ t: "escaped", kind, error: encodeError(error, isMcp) });
process.on("uncaughtException", escaped("uncaughtException"));
process.on("unhandledRejection", escaped("unhandledRejection"));

// Positions in the bundled submission read as the learner's own files (src/…:line): mapped
// only when something is reported, never while the tracker records, which stays cheap.
const toSource = sourcePositions(process.argv[2] ?? "");
const encodeError = (error: unknown, mcp: (e: unknown) => boolean) => {
  const encoded = encodeRaw(error, mcp);
  if (encoded.stack) encoded.stack = toSource(encoded.stack);
  return encoded;
};

type Client = Record<string, unknown> & { [method: string]: any };
const clients = new Map<number, Client>();
const controllers = new Map<number, AbortController>();
let mod: Record<string, any> | undefined;
let loadError: unknown;
const isMcp = (e: unknown) => typeof mod?.McpError === "function" && e instanceof mod.McpError;

// A signal placeholder ({ $signal: id, aborted, reason }) becomes the host's mirror signal.
function revive(value: unknown): unknown {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  if (!("signal" in record)) return value;
  const placeholder = record.signal as { $signal?: number; aborted?: boolean; reason?: unknown } | undefined;
  if (!placeholder || typeof placeholder.$signal !== "number") return value;
  let controller = controllers.get(placeholder.$signal);
  if (!controller) {
    controller = new AbortController();
    controllers.set(placeholder.$signal, controller);
    if (placeholder.aborted) controller.abort(placeholder.reason);
  }
  return { ...record, signal: controller.signal };
}

// A function of the worker's ({ $fn: id } in the constructor's options) becomes a stand-in
// that reports each call back to the worker.
function standIns(value: unknown): unknown {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, field] of Object.entries(copy)) {
    const fn = (field as { $fn?: unknown } | null)?.$fn;
    if (typeof fn === "number") copy[key] = (...args: unknown[]) => post({ t: "callback", fn, args: encodeValue(args) });
  }
  return copy;
}

const getters = ["pendingCount", "pid", "initialized", "stderr"] as const;

function readState(client: Client) {
  const state: Record<string, unknown> = {};
  for (const key of getters) {
    try {
      state[key] = encodeValue(client[key]);
    } catch (error) {
      state[key] = { threw: encodeError(error, isMcp) };
    }
  }
  return state;
}

const queries: Record<string, (arg: any) => unknown> = {
  // A numbered snapshot of the timers alive now, for liveClientTimers({ mark }) (client-side.ts).
  timerMark: (id: number) => void timerMarks.set(Number(id), timerSnapshot()),
  liveClientTimers: (before: { mark?: unknown } | undefined) => liveClientTimers(timerMarks.get(Number(before?.mark))).map(toSource),
  clientTimerDelays: (before: { mark?: unknown } | undefined) => clientTimerDelays(timerMarks.get(Number(before?.mark))),
  abortListeners: (id: number) => {
    const controller = controllers.get(id);
    return controller ? abortListeners(controller.signal) : 0;
  },
  liveClientTimeoutListeners: () => liveClientTimeoutListeners(),
  // What was posted before this answer is on its way to the worker: it counts them in.
  stillness: () => ({ still: stillness() ?? null, posted }),
  startedCount: () => startedCount(),
  processesStarted: () => processesStarted(),
  spawnCalls: () => spawnCalls(),
  resetSpawnCalls: () => resetSpawnCalls(),
  // The test's abort, on a timer of this process (see client-side.ts, abortAfter).
  abortAfter: ({ id, ms }: { id: number; ms: number }) => {
    const controller = controllers.get(id);
    if (controller) abortTimers.set(id, untracked(() => setTimeout(() => controller.abort(), ms)));
  },
  cancelAbortAfter: (id: number) => clearTimeout(abortTimers.get(id)),
  // What still keeps this process running, less what the host itself had once it started
  // reading requests (its socket, its stdio).
  resources: () => {
    const own = [...hostResources];
    return process.getActiveResourcesInfo().filter((kind) => {
      const at = own.indexOf(kind);
      if (at === -1) return true;
      own.splice(at, 1);
      return false;
    });
  },
};
const abortTimers = new Map<number, ReturnType<typeof setTimeout>>();
const timerMarks = new Map<number, Set<unknown>>();

// One request of the worker's. Sync requests are answered at once; calls when they settle.
function handle(message: any): void {
  const { seq } = message;
  const reply = (body: object): void => (message.sync ? send : post)({ t: "reply", seq, ...body });
  try {
    switch (message.t) {
      case "batch":
        // What the test did in one turn, done here in one turn: nothing is read in between.
        for (const each of message.messages) handle(each);
        return;
      case "new": {
        if (!mod) throw loadError ?? new Error("the submission did not load");
        const args = unpackArgs(message.args).map(standIns);
        clients.set(message.client, new mod.McpClient(...args));
        return reply({ ok: true });
      }
      case "get": {
        const client = clients.get(message.client);
        return reply(client ? { ok: true, state: readState(client) } : { ok: false, error: encodeError(new Error("unknown client"), isMcp) });
      }
      case "call":
        return call(message);
      case "abort":
        controllers.get(message.signal)?.abort(unpackArgs(message.args)[0]);
        return reply({ ok: true });
      case "query":
        // Stillness is judged once this turn's microtasks have run (a call just made or just
        // settled is not yet visible before), so after them, in a turn of its own.
        // (So is any query asked for "after the turn": what the client did at once is in it.)
        if (message.what === "stillness" || message.afterTurn === true) return void untracked(() => setImmediate(() => reply({ ok: true, value: encodeValue(queries[message.what]?.(message.arg)) })));
        return reply({ ok: true, value: encodeValue(queries[message.what]?.(message.arg)) });
      case "export":
        return reply({ ok: true, value: encodeValue(mod && typeof mod[message.name] !== "function" ? mod[message.name] : undefined) });
      case "drop":
        clients.delete(message.client);
        return reply({ ok: true });
      case "drain":
        return drain(reply);
      default:
        return reply({ ok: false, error: encodeError(new Error(`unknown request ${message.t}`), isMcp) });
    }
  } catch (error) {
    reply({ ok: false, error: encodeError(error, isMcp) });
  }
}

function call(message: any): void {
  const settled = (body: object) => post({ t: "settled", seq: message.seq, ...body });
  const client = clients.get(message.client);
  const args = unpackArgs(message.args).map(revive);
  let promise: unknown;
  try {
    if (!client) throw new Error("unknown client");
    promise = client[message.op](...args);
  } catch (error) {
    return void settled({ ok: false, error: encodeError(error, isMcp) });
  }
  Promise.resolve(promise).then(
    (value) => settled({ ok: true, value: encodeValue(value), state: readState(client) }),
    (error) => settled({ ok: false, error: encodeError(error, isMcp), state: readState(client) }),
  );
}

// The outside leak check (channel.ts, drain()): the host lets go of everything of its own that
// keeps its event loop alive (its abort timers; its socket stops counting), so that only what
// the submission left (a timer, a child, a stream, a socket) can keep it running. The worker
// watches for the exit from outside; the socket still answers what is left, for the message.
function drain(reply: (body: object) => void): void {
  for (const timer of abortTimers.values()) clearTimeout(timer);
  abortTimers.clear();
  controllers.clear();
  clients.clear();
  reply({ ok: true });
  socket.unref();
}

// The worker is gone: nothing of the host may outlive it.
socket.on("close", () => realExit(0));
socket.on("error", () => realExit(0));

const entry = process.argv[2] ?? "";
if (process.env.LAB_CONFINE) await import("../../../grader/sandbox/guard.mjs");
try {
  mod = (await import(pathToFileURL(entry).href)) as Record<string, any>;
} catch (error) {
  loadError = error;
}
// Requests wait in the socket until the submission has loaded (or failed to).
let buffer = "";
socket.setEncoding("utf8");
socket.on("data", (chunk: string) => {
  buffer += chunk;
  let newline: number;
  while ((newline = buffer.indexOf("\n")) !== -1) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    if (line) handle(JSON.parse(line));
  }
});
const hostResources = process.getActiveResourcesInfo();
