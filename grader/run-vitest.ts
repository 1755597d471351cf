// Runs the lab's vitest as a payload (grader/sandbox): inside the OS sandbox where the
// machine allows it, else as a child in its own process group. An overall deadline, bounded
// captured output, and a watch on its process tree. Results arrive only over the signed
// result channel (sandbox/channel.ts), never from a file or from its stdout (which the
// submission shares).

import { join } from "node:path";
import { newKey, readChannel } from "./sandbox/channel.ts";
import { startPayload, type NsReport, type SandboxKind } from "./sandbox/index.ts";
import { descendants, isLive, killGroup, procInfo, type ProcInfo } from "./procs.ts";

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
  /** Processes still alive when vitest exited, vitest's own workers excepted (not yet killed). */
  leftovers: Array<{ pid: number; command?: string }>;
  pid: number | undefined;
  /** The verified records of the result channel, in order. */
  records: Array<Record<string, unknown>>;
  /** Why the channel cannot be trusted, when it cannot. */
  tampered?: string;
  /** The sandbox could not be set up (its mount script failed). */
  sandboxError?: string;
}

export interface VitestRunOptions {
  root: string;
  cwd: string;
  configFile: string;
  reporters: string[];
  env: Record<string, string>;
  deadlineMs: number;
  /** Aborting it kills the run (the preflight failed). */
  signal?: AbortSignal;
  /** Resolves true when the tests may load the submission (child/gate.ts), false never to. */
  gate: Promise<boolean>;
  sandbox: SandboxKind;
  hide: string[];
  gradeDir: string;
  scratch: string;
}

export function runVitest(o: VitestRunOptions): Promise<VitestRun> {
  const started = Date.now();
  const vitest = join(o.root, "node_modules", "vitest", "vitest.mjs");
  const key = newKey();
  const command = [process.execPath, vitest, "run", "--config", o.configFile, "--configLoader", "runner", ...o.reporters.map((r) => `--reporter=${r}`)];
  const payload = startPayload({
    command,
    cwd: o.cwd,
    env: { ...o.env, LAB_CHANNEL: "1" },
    input: `${key}\n`,
    sandbox: o.sandbox,
    root: o.root,
    hide: o.hide,
    gradeDir: o.gradeDir,
    scratch: o.scratch,
    cpuSeconds: Math.ceil(o.deadlineMs / 1000) + 30,
  });
  const { child } = payload;
  const channel = readChannel(payload.channel, key);
  void o.gate.then((go) => {
    if (go) payload.stdin.write("go\n");
    payload.stdin.end();
  });
  return new Promise((resolvePromise) => {
    let output = "";
    const keep = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.length > MAX_CAPTURED_BYTES * 2) output = output.slice(-MAX_CAPTURED_BYTES);
    };
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    const seen = new Map<number, ProcInfo>();
    // vitest's own workers, known by identity: direct children of vitest's main process.
    const workers = new Set<number>();
    const scan = () => {
      if (child.pid === undefined) return;
      for (const p of descendants(child.pid)) {
        if (!seen.has(p.pid)) seen.set(p.pid, p);
        if (o.sandbox === "none" && p.ppid === child.pid) workers.add(p.pid);
      }
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
    const finish = async (code: number | null, signal: NodeJS.Signals | null) => {
      if (done) return;
      done = true;
      clearInterval(scanner);
      clearTimeout(deadline);
      o.signal?.removeEventListener("abort", stop);
      let leftovers: VitestRun["leftovers"] = [];
      let report: NsReport | undefined;
      if (o.sandbox === "none") {
        // Taken before the group kill: what outlived vitest (its own workers excepted).
        leftovers = stillAlive(seen).filter((p) => !workers.has(p.pid));
        if (child.pid !== undefined) killGroup(child.pid);
      } else {
        if (child.pid !== undefined) killGroup(child.pid);
        report = await payload.report;
        leftovers = report?.alive ?? [];
        if (report?.exit) {
          code = report.exit.code;
          signal = report.exit.signal as NodeJS.Signals | null;
        }
      }
      // The write ends close when the last process holding them is gone; bounded wait.
      await Promise.race([channel.closed, new Promise((r) => setTimeout(r, 1_000).unref())]);
      payload.channel.destroy();
      resolvePromise({
        code,
        signal,
        timedOut,
        durationMs: Date.now() - started,
        output: output.slice(-MAX_CAPTURED_BYTES),
        seen,
        leftovers,
        pid: child.pid,
        records: channel.records,
        ...(channel.tampered ? { tampered: channel.tampered } : {}),
        ...(report?.setupError ? { sandboxError: report.setupError } : {}),
      });
    };
    child.on("error", () => void finish(null, null));
    // 'exit', not 'close': a process the submission left behind can hold the pipes open.
    child.on("exit", (code, signal) => void finish(code, signal));
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
