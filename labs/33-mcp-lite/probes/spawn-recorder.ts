// Records every process the tests' worker starts, at two levels: the child_process API that
// was called (spawn, exec, execFile, fork, their Sync forms) with whether it asked for a
// shell, and what actually ran: the program and argv handed to ChildProcess.prototype.spawn,
// where every asynchronous API ends up (a shell shows there as /bin/sh -c …, whatever the
// options said). The API functions are wrapped in place and the ESM named exports re-synced,
// so `import { spawn } from "node:child_process"` sees the wrapper too. Loaded by the lab's
// setup file, before any test file imports the submission.

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
const holder = globalThis as unknown as Record<symbol, { calls: SpawnCall[]; started: number } | undefined>;

// exec/execSync always use a shell; the others only when options.shell is set.
const ALWAYS_SHELL = new Set(["exec", "execSync"]);
const APIS = ["spawn", "spawnSync", "execFile", "execFileSync", "exec", "execSync", "fork"];

if (!holder[KEY]) {
  const state = { calls: [] as SpawnCall[], started: 0 };
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
  proto.spawn = function (this: unknown, options: { file?: string; args?: string[] }) {
    state.started += 1;
    const argv = Array.isArray(options?.args) ? options.args.map(String) : [];
    state.calls.push({ api: "process", command: String(options?.file), args: argv.slice(1), shell: false });
    return rawSpawn.call(this, options);
  };
  syncBuiltinESMExports();
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
