// Records every child_process call made while the probes run (which API, which command,
// whether a shell was asked for), by wrapping node:child_process's functions in place and
// re-syncing the ESM named exports, so `import { spawn } from "node:child_process"` in the
// submission sees the wrapper too. Import this module before the submission.

import { createRequire, syncBuiltinESMExports } from "node:module";

export interface SpawnCall {
  api: string;
  command: string;
  args: string[];
  shell: unknown;
}

const require = createRequire(import.meta.url);
const childProcess = require("node:child_process") as Record<string, unknown>;
const KEY = Symbol.for("lab33.spawnRecorder");
const holder = globalThis as unknown as Record<symbol, SpawnCall[] | undefined>;

// exec/execSync always use a shell; the others only when options.shell is set.
const ALWAYS_SHELL = new Set(["exec", "execSync"]);
const APIS = ["spawn", "spawnSync", "execFile", "execFileSync", "exec", "execSync", "fork"];

if (!holder[KEY]) {
  const calls: SpawnCall[] = [];
  holder[KEY] = calls;
  for (const api of APIS) {
    const original = childProcess[api] as (...args: unknown[]) => unknown;
    if (typeof original !== "function") continue;
    childProcess[api] = function (this: unknown, ...args: unknown[]) {
      calls.push(describeCall(api, args));
      return original.apply(this, args);
    };
  }
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
  return [...(holder[KEY] ?? [])];
}

export function resetSpawnCalls(): void {
  holder[KEY]?.splice(0);
}
