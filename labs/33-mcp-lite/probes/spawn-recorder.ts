// Records every process the tests' worker starts, at two levels: the child_process API that
// was called (spawn, exec, execFile, fork, their Sync forms) with whether it asked for a
// shell, and what actually ran: the program and argv handed to ChildProcess.prototype.spawn,
// where every asynchronous API ends up (a shell shows there as /bin/sh -c …, whatever the
// options said). The API functions are wrapped in place and the ESM named exports re-synced,
// so `import { spawn } from "node:child_process"` sees the wrapper too. Loaded by the lab's
// setup file, before any test file imports the submission.
//
// For the hang detector's stillness check (tests/support.ts) it also keeps, per process
// started, the bytes that reached the client's end of its stdout and stderr pipes and the
// signals sent to it; the fixture server keeps the other side of the ledger (--state).

import type { ChildProcess } from "node:child_process";
import { createRequire, syncBuiltinESMExports } from "node:module";

export interface SpawnCall {
  /** The API called, or "process" for what ChildProcess.prototype.spawn was asked to run. */
  api: string;
  command: string;
  args: string[];
  shell: unknown;
}

const require = createRequire(import.meta.url);
const childProcess = require("node:child_process") as Record<string, unknown> & { ChildProcess: { prototype: Record<string, unknown> } };
const KEY = Symbol.for("lab33.spawnRecorder");
/** One process the worker started, with what the client's side of its pipes has seen. */
export interface StartedProcess {
  child: ChildProcess;
  /** The fixture's --state file, when the program is the fixture server. */
  stateFile: string | undefined;
  /** The fixture's --pid-file (the server's pid, then its children's), when it has one. */
  pidFile?: string | undefined;
  /** Bytes pushed into child.stdout / child.stderr (they reached the client's process). */
  out: number;
  err: number;
  /** Signals other than 0 sent to the process or its group. */
  signals: number;
}

interface RecorderState {
  calls: SpawnCall[];
  started: number;
  processes: StartedProcess[];
}

const holder = globalThis as unknown as Record<symbol, RecorderState | undefined>;

// exec/execSync always use a shell; the others only when options.shell is set.
const ALWAYS_SHELL = new Set(["exec", "execSync"]);
const APIS = ["spawn", "spawnSync", "execFile", "execFileSync", "exec", "execSync", "fork"];

if (!holder[KEY]) {
  const state: RecorderState = { calls: [], started: 0, processes: [] };
  holder[KEY] = state;
  for (const api of APIS) {
    const original = childProcess[api] as (...args: unknown[]) => unknown;
    if (typeof original !== "function") continue;
    childProcess[api] = function (this: unknown, ...args: unknown[]) {
      state.calls.push(describeCall(api, args));
      return original.apply(this, args);
    };
  }
  const proto = childProcess.ChildProcess.prototype;
  const rawSpawn = proto.spawn as (this: unknown, options: { file?: string; args?: string[] }) => unknown;
  proto.spawn = function (this: ChildProcess, options: { file?: string; args?: string[] }) {
    state.started += 1;
    const argv = Array.isArray(options?.args) ? options.args.map(String) : [];
    state.calls.push({ api: "process", command: String(options?.file), args: argv.slice(1), shell: false });
    const result = rawSpawn.call(this, options);
    state.processes.push(watch(this, argv));
    return result;
  };
  const rawKill = proto.kill as (this: ChildProcess, signal?: unknown) => boolean;
  proto.kill = function (this: ChildProcess, signal?: unknown) {
    if (signal !== 0) for (const p of state.processes) if (p.child === this) p.signals += 1;
    return rawKill.call(this, signal);
  };
  const processKill = process.kill;
  process.kill = function kill(pid: number, signal?: string | number) {
    if (signal !== 0) for (const p of state.processes) if (p.child.pid !== undefined && p.child.pid === Math.abs(pid)) p.signals += 1;
    return processKill.call(process, pid, signal);
  } as typeof process.kill;
  syncBuiltinESMExports();
}

// Counts the bytes that reach the client's end of the child's stdout and stderr (what the
// stream is pushed, before any consumer reads it), without adding a listener of its own.
function watch(child: ChildProcess, argv: string[]): StartedProcess {
  const at = argv.indexOf("--state");
  const pidAt = argv.indexOf("--pid-file");
  const record: StartedProcess = { child, stateFile: at === -1 ? undefined : argv[at + 1], pidFile: pidAt === -1 ? undefined : argv[pidAt + 1], out: 0, err: 0, signals: 0 };
  for (const key of ["stdout", "stderr"] as const) {
    const stream = child[key] as (NodeJS.ReadableStream & { push(chunk: unknown, encoding?: unknown): boolean }) | null;
    if (!stream) continue;
    const push = stream.push;
    stream.push = function (chunk: unknown, encoding?: unknown) {
      if (chunk !== null && chunk !== undefined) record[key === "stdout" ? "out" : "err"] += (chunk as { length: number }).length;
      return push.call(this, chunk, encoding);
    };
  }
  return record;
}

/** The processes the worker started that are not finished yet (see finished()). */
export function liveProcesses(): StartedProcess[] {
  const state = holder[KEY];
  if (!state) return [];
  state.processes = state.processes.filter((p) => !finished(p.child));
  return [...state.processes];
}

// A process is finished when it has exited (or never started) and every pipe of the client's
// to it is closed or has ended: nothing more can come from it.
export function finished(child: ChildProcess): boolean {
  if (child.exitCode === null && child.signalCode === null) return false;
  if (child.stdin && !child.stdin.destroyed) return false;
  return [child.stdout, child.stderr].every((stream) => !stream || stream.destroyed || stream.readableEnded);
}

function describeCall(api: string, args: unknown[]): SpawnCall {
  const command = String(args[0]);
  const list = Array.isArray(args[1]) ? (args[1] as unknown[]).map(String) : [];
  const options = args.find((a, i) => i > 0 && a !== null && typeof a === "object" && !Array.isArray(a)) as { shell?: unknown } | undefined;
  return { api, command, args: list, shell: ALWAYS_SHELL.has(api) ? true : options?.shell };
}

/** The calls recorded since the last reset. */
export function spawnCalls(): SpawnCall[] {
  return [...(holder[KEY]?.calls ?? [])];
}

/** What ChildProcess.prototype.spawn was asked to run since the last reset. */
export function processesStarted(): SpawnCall[] {
  return spawnCalls().filter((call) => call.api === "process");
}

/** How many processes the worker has started so far (never reset). */
export function startedCount(): number {
  return holder[KEY]?.started ?? 0;
}

export function resetSpawnCalls(): void {
  holder[KEY]?.calls.splice(0);
}
