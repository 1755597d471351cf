// Runs the lab's vitest in a child process: its own process group, an overall deadline,
// bounded captured output, and a watch on its process tree. Results are read only from
// the JSON file vitest writes (never from its stdout, which the submission shares).

import { spawn } from "node:child_process";
import { join } from "node:path";
import { commandLine, descendants, isLive, killGroup, procInfo, type ProcInfo } from "./procs.ts";

/** Output kept from the child's stdout+stderr, in bytes (the tail). */
export const MAX_CAPTURED_BYTES = 64 * 1024;
/** How often the child's process tree is scanned, in ms. */
export const TREE_SCAN_MS = 100;

export interface VitestRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
  /** Tail of what the child printed (diagnostics only; never trusted for results). */
  output: string;
  /** Every process seen in the child's tree while it ran, by pid (with its start time). */
  seen: Map<number, ProcInfo>;
  /** Processes of the tree still alive when vitest exited (not yet killed). */
  leftovers: ProcInfo[];
  pid: number | undefined;
}

export interface VitestRunOptions {
  root: string;
  cwd: string;
  configFile: string;
  reporters: string[];
  outputFile: string;
  env: NodeJS.ProcessEnv;
  deadlineMs: number;
  /** Aborting it kills the run (the preflight failed). */
  signal?: AbortSignal;
}

export function runVitest(o: VitestRunOptions): Promise<VitestRun> {
  const started = Date.now();
  const vitest = join(o.root, "node_modules", "vitest", "vitest.mjs");
  const args = [vitest, "run", "--config", o.configFile, ...o.reporters.map((r) => `--reporter=${r}`), `--outputFile.json=${o.outputFile}`];
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, args, {
      cwd: o.cwd,
      env: o.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group, so one kill reaches vitest and its workers
      shell: false,
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.length > MAX_CAPTURED_BYTES * 2) output = output.slice(-MAX_CAPTURED_BYTES);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const seen = new Map<number, ProcInfo>();
    const scan = () => {
      if (child.pid === undefined) return;
      for (const p of descendants(child.pid)) if (!seen.has(p.pid)) seen.set(p.pid, p);
    };
    const scanner = setInterval(scan, TREE_SCAN_MS);
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      scan();
      if (child.pid !== undefined) killGroup(child.pid);
    }, o.deadlineMs);
    const stop = () => {
      if (child.pid !== undefined) killGroup(child.pid);
    };
    o.signal?.addEventListener("abort", stop, { once: true });
    let done = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (done) return;
      done = true;
      clearInterval(scanner);
      clearTimeout(deadline);
      o.signal?.removeEventListener("abort", stop);
      // Taken before the group kill: what outlived vitest (vitest's own workers excluded).
      const leftovers = stillAlive(seen).filter((p) => !commandLine(p.pid, 4096).includes("node_modules/vitest/"));
      if (child.pid !== undefined) killGroup(child.pid); // workers and anything else left in the group
      resolvePromise({
        code,
        signal,
        timedOut,
        durationMs: Date.now() - started,
        output: output.slice(-MAX_CAPTURED_BYTES),
        seen,
        leftovers,
        pid: child.pid,
      });
    };
    child.on("error", () => finish(null, null));
    // 'exit', not 'close': a process the submission left behind can hold the pipes open.
    child.on("exit", (code, signal) => finish(code, signal));
  });
}

// Processes seen in the tree that are still alive now (same pid and start time).
export function stillAlive(seen: Map<number, ProcInfo>): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const p of seen.values()) {
    const now = procInfo(p.pid);
    if (isLive(now) && now.startTicks === p.startTicks) out.push(now);
  }
  return out;
}
