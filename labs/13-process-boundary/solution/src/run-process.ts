// Lesson 13 reference: run one program across the process boundary and get it back whole.
// spawn(executable, args, { shell: false }) keeps every argument verbatim; each output
// stream is capped in bytes; a deadline and an AbortSignal stop the program (SIGTERM to its
// process group, SIGKILL after a grace); and the promise settles only once the program and
// everything it started in its group are gone, its timers cleared and its listener removed.

import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { ProcessError, type PartialRun, type ProcessErrorCode } from "./errors.ts";
import { CappedOutput } from "./output-cap.ts";

export { ProcessError, type PartialRun, type ProcessErrorCode } from "./errors.ts";

/** Default deadline of one run, in ms. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default bytes kept of stdout and of stderr, each (1 MiB). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** Default grace between SIGTERM and SIGKILL when a run is stopped, in ms. */
export const DEFAULT_KILL_GRACE_MS = 1_000;
/** Longest wait for the rest of the program's group to disappear after it exited, in ms. */
export const GROUP_GONE_MS = 2_000;

const isWindows = process.platform === "win32";

export interface RunOptions {
  /** Arguments, each a string, passed verbatim (no shell, no splitting, no quoting). Default: []. */
  args?: string[];
  /** Working directory. Default: the caller's. */
  cwd?: string;
  /** Variables added on top of PATH (nothing else of process.env reaches the program). */
  env?: Record<string, string>;
  /** Deadline in ms; positive integer. Default: 10_000. */
  timeoutMs?: number;
  /** Bytes kept of stdout and of stderr, each; one byte more stops the run. Default: 1 MiB. */
  maxOutputBytes?: number;
  /** Grace in ms between SIGTERM and SIGKILL when the run is stopped. Default: 1_000. */
  killGraceMs?: number;
  /** Aborting it stops the run; already aborted, nothing is spawned. */
  signal?: AbortSignal;
}

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

// Runs the program to its end and resolves with its exit status and output (a non-zero exit
// is a result, not an error). Rejects with ProcessError when it could not start or was stopped.
export async function runProcess(executable: string, options: RunOptions = {}): Promise<RunResult> {
  const o = validate(executable, options);
  if (o.signal?.aborted) throw new ProcessError("ABORTED", "aborted before the start; nothing was spawned");
  return new Promise<RunResult>((resolve, reject) => {
    const started = Date.now();
    // #region lesson:spawn
    const child = spawn(executable, o.args, {
      cwd: o.cwd,
      env: { ...(process.env.PATH === undefined ? {} : { PATH: process.env.PATH }), ...o.env },
      shell: false,
      stdio: ["ignore", "pipe", "pipe"],
      // A process group of its own on Unix, so stopping it reaches what it started too.
      detached: !isWindows,
      windowsHide: true,
    });
    // #endregion lesson:spawn
    const stdout = new CappedOutput(o.maxOutputBytes);
    const stderr = new CappedOutput(o.maxOutputBytes);
    let reason: ProcessErrorCode | undefined;
    let killTimer: ReturnType<typeof setTimeout> | undefined;

    const signalGroup = (name: NodeJS.Signals) => {
      try {
        if (isWindows || child.pid === undefined) child.kill(name);
        else process.kill(-child.pid, name);
      } catch {
        // Already gone.
      }
    };
    // #region lesson:stop-ladder
    // The first reason to stop wins; the ladder runs once.
    const stop = (why: ProcessErrorCode) => {
      reason ??= why;
      if (killTimer !== undefined) return;
      signalGroup("SIGTERM");
      killTimer = setTimeout(() => signalGroup("SIGKILL"), o.killGraceMs);
    };
    // #endregion lesson:stop-ladder
    const timer = setTimeout(() => stop("TIMEOUT"), o.timeoutMs);
    const onAbort = () => stop("ABORTED");
    o.signal?.addEventListener("abort", onAbort, { once: true });
    const release = () => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      o.signal?.removeEventListener("abort", onAbort);
    };

    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk) && stop("OUTPUT_LIMIT"));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk) && stop("OUTPUT_LIMIT"));
    const closed = new Promise<void>((done) => child.once("close", () => done()));

    child.once("error", (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // an error after the start; "exit" decides
      release();
      reject(new ProcessError("SPAWN_FAILED", `cannot start ${executable}: ${error.code ?? error.message}`, { cause: error }));
    });
    // #region lesson:on-exit
    // Wait for "exit", then for the group and the pipes: a grandchild that inherited stdout
    // could hold the pipe open forever, so the group is killed and the drain is bounded.
    child.once("exit", async (exitCode, signal) => {
      if (!isWindows && child.pid !== undefined) {
        signalGroup("SIGKILL");
        await groupGone(child.pid, GROUP_GONE_MS);
      }
      await within(closed, 200);
      child.stdout.destroy();
      child.stderr.destroy();
      release();
      const run: PartialRun = { stdout: stdout.text(), stderr: stderr.text(), exitCode, signal };
      if (reason) reject(new ProcessError(reason, describe(reason, o), { run }));
      else resolve({ ...run, durationMs: Date.now() - started });
    });
    // #endregion lesson:on-exit
  });
}

function describe(reason: ProcessErrorCode, o: ResolvedOptions): string {
  if (reason === "TIMEOUT") return `stopped after timeoutMs (${o.timeoutMs} ms)`;
  if (reason === "OUTPUT_LIMIT") return `stopped: output passed maxOutputBytes (${o.maxOutputBytes} bytes)`;
  return "stopped: the signal aborted";
}

// Polls until no live process of the group is left. A killed grandchild is re-parented and
// may stay a zombie until init reaps it (some container inits never do), so on Linux the
// group's members are read from /proc and zombies do not count; elsewhere a signal 0 to
// the group fails with ESRCH once it is empty.
async function groupGone(pgid: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!groupAlive(pgid)) return;
    await delay(10);
  }
}

function groupAlive(pgid: number): boolean {
  if (existsSync("/proc/self/stat")) {
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${name}/stat`, "utf8");
      } catch {
        continue; // exited while we looked
      }
      // Fields after the ")" closing the command name: state ppid pgrp ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
    }
    return false;
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

// Waits for a promise, at most `ms`; the timer is cleared either way.
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface ResolvedOptions {
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes: number;
  killGraceMs: number;
  signal: AbortSignal | undefined;
}

function validate(executable: unknown, options: RunOptions): ResolvedOptions {
  if (typeof executable !== "string" || executable.length === 0) invalid("executable must be a non-empty string");
  const args = options.args ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) invalid("args must be an array of strings");
  const env = options.env ?? {};
  if (typeof env !== "object" || env === null || Object.values(env).some((v) => typeof v !== "string")) invalid("env values must be strings");
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) invalid("signal must be an AbortSignal");
  return {
    args: [...args],
    cwd: options.cwd,
    env: { ...env },
    timeoutMs: integer("timeoutMs", options.timeoutMs, DEFAULT_TIMEOUT_MS, 1),
    maxOutputBytes: integer("maxOutputBytes", options.maxOutputBytes, DEFAULT_MAX_OUTPUT_BYTES, 1),
    killGraceMs: integer("killGraceMs", options.killGraceMs, DEFAULT_KILL_GRACE_MS, 0),
    signal: options.signal,
  };
}

function integer(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > 2 ** 31 - 1) {
    invalid(`${name} must be an integer from ${min} to ${2 ** 31 - 1}, got ${String(value)}`);
  }
  return value;
}

function invalid(message: string): never {
  throw new ProcessError("INVALID_ARGUMENT", message);
}
