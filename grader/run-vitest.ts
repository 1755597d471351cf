// Runs the lab's vitest as a payload (grader/sandbox): inside the OS sandbox where the
// machine allows it, else as a child in its own process group. An overall deadline, bounded
// captured output, and a watch on its process tree. Results arrive only over the signed
// result channel (sandbox/channel.ts), never from a file or from its stdout (which the
// submission shares).

import { chmodSync, copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { bound, type BoundedOutcome } from "./bounded-run.ts";
import { newKey, readChannel } from "./sandbox/channel.ts";
import { startPayload, type NsReport, type Payload, type SandboxKind } from "./sandbox/index.ts";
import type { GradeGroup } from "./sandbox/cgroup.ts";
import { descendants, isLive, procInfo, type ProcInfo } from "./procs.ts";

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
  /** Without a sandbox: every process seen in the child's tree while it ran, by pid (with its start time). */
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
  /** In the sandbox: the scratch folder's records as ns-init read them (undefined without its report). */
  scratchRecords?: NsReport["records"];
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
  /** Resolves true when the tests may load the submission (child/gate.ts), false never to;
   *  "unbundled" as true, where the client hosts must load it without their bundles. */
  gate: Promise<boolean | "unbundled">;
  sandbox: SandboxKind;
  hide: string[];
  gradeDir: string;
  scratch: string;
  /** Folders the payload expects in its scratch, and the records to bring back from it. */
  scratchFolders?: string[];
  records?: string[];
  /** The grade's control group (sandbox/cgroup.ts), where it has one. */
  group?: GradeGroup;
}

export async function runVitest(options: VitestRunOptions): Promise<VitestRun> {
  const started = Date.now();
  const key = newKey();
  const payload = startPayload({
    command: vitestCommand(options),
    cwd: options.cwd,
    env: { ...options.env, LAB_CHANNEL: "1" },
    input: `${key}\n`,
    sandbox: options.sandbox,
    root: options.root,
    hide: options.hide,
    gradeDir: options.gradeDir,
    scratch: options.scratch,
    scratchFolders: options.scratchFolders ?? [],
    records: options.records ?? [],
    cpuSeconds: Math.ceil(options.deadlineMs / 1000) + 30,
    group: options.group,
  });
  const channel = readChannel(payload.channel, key);
  void options.gate.then((go) => {
    if (go) payload.stdin.write(go === "unbundled" ? "go unbundled\n" : "go\n");
    payload.stdin.end();
  });
  const watch = watchTree(payload.child, options.sandbox);
  let leftovers: VitestRun["leftovers"] = [];
  const out = await bound(payload.child, {
    deadlineMs: options.deadlineMs,
    tailBytes: MAX_CAPTURED_BYTES,
    signal: options.signal,
    atDeadline: watch.scan,
    // Taken before the group kill: what outlived vitest (its own workers excepted).
    atExit: () => {
      leftovers = watch.stop();
    },
  });
  return { ...(await afterExit(payload, channel, out, options.sandbox, leftovers)), durationMs: Date.now() - started, seen: watch.seen };
}

// What is known once vitest exited: in the sandbox, ns-init's report (the payload's exit
// status and what was still alive); the channel's records once its write ends closed.
async function afterExit(payload: Payload, channel: ReturnType<typeof readChannel>, out: BoundedOutcome, sandbox: SandboxKind, leftovers: VitestRun["leftovers"]): Promise<Omit<VitestRun, "durationMs" | "seen">> {
  let { code, signal } = out;
  const report = sandbox === "none" ? undefined : await payload.report;
  if (report) {
    leftovers = report.alive ?? [];
    if (report.exit) {
      code = report.exit.code;
      signal = report.exit.signal as NodeJS.Signals | null;
    }
  }
  // The write ends close when the last process holding them is gone; bounded wait.
  await Promise.race([channel.closed, new Promise((r) => setTimeout(r, 1_000).unref())]);
  payload.channel.destroy();
  return {
    code,
    signal,
    timedOut: out.timedOut,
    output: out.output,
    leftovers,
    pid: payload.child.pid,
    records: channel.records,
    ...(channel.tampered ? { tampered: channel.tampered } : {}),
    ...(report?.setupError ? { sandboxError: report.setupError } : {}),
    ...(report?.records ? { scratchRecords: report.records } : {}),
  };
}

// vitest's command line: its own entry, the grade's config, the reporters.
function vitestCommand(options: VitestRunOptions): string[] {
  const vitest = join(options.root, "node_modules", "vitest", "vitest.mjs");
  return [executeOnlyNode(options.gradeDir), vitest, "run", "--config", options.configFile, "--configLoader", "runner", ...options.reporters.map((r) => `--reporter=${r}`)];
}

// Without a sandbox: scans the child's process tree every TREE_SCAN_MS; `stop` ends the scans
// and returns what is still alive, vitest's own workers (direct children of its main process,
// known by identity) excepted. In the sandbox nothing is scanned: ns-init, pid 1 of the run's
// namespace, reports what is still alive instead, and the kernel ends the rest with it (a scan
// of the machine's whole /proc every 100 ms cost the grader up to a second of CPU per grade).
function watchTree(child: ChildProcess, sandbox: SandboxKind): { seen: Map<number, ProcInfo>; scan: () => void; stop: () => VitestRun["leftovers"] } {
  const seen = new Map<number, ProcInfo>();
  if (sandbox !== "none") return { seen, scan: () => {}, stop: () => [] };
  const workers = new Set<number>();
  const scan = () => {
    if (child.pid === undefined) return;
    for (const p of descendants(child.pid)) {
      if (!seen.has(p.pid)) seen.set(p.pid, p);
      if (p.ppid === child.pid) workers.add(p.pid);
    }
  };
  const scanner = setInterval(scan, TREE_SCAN_MS);
  const stop = () => {
    clearInterval(scanner);
    return stillAlive(seen).filter((p) => !workers.has(p.pid));
  };
  return { seen, scan, stop };
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

// A copy of Node that its user may execute but not read (mode 0111), for vitest's main process
// and its workers, which hold the result channel, its key and the test code. The kernel marks
// a process started from a file it cannot read as not dumpable: a process of the same user (the
// client's host, anything it starts) can then neither read its memory (/proc/<pid>/mem), nor
// take its file descriptors (pidfd_getfd), nor ptrace it. Root reads it anyway, so this holds
// where the run is not root: always inside the sandbox, and for a non-root grader without one.
// The copy is made once per Node binary and kept (NODE_CACHE below); each grade links it into
// its own folder, instead of copying 100 MB before vitest can start.
export function executeOnlyNode(gradeDir: string, cache = NODE_CACHE): string {
  const copy = join(gradeDir, "node");
  if (existsSync(copy)) return copy;
  const kept = keptExecuteOnlyNode(cache);
  if (kept) {
    try {
      linkSync(kept, copy);
      return copy;
    } catch {
      // another filesystem, or links refused: a copy of its own
    }
  }
  copyFileSync(process.execPath, copy);
  chmodSync(copy, 0o111);
  return copy;
}

/** Where the execute-only copies are kept: a folder of the grader's user, nobody else's. */
export const NODE_CACHE = join(tmpdir(), `lab-grader-node-${process.getuid?.() ?? "user"}`);

// The kept execute-only copy of this Node binary, made when missing; undefined when the folder
// is not the grader's own (another user's, a link, open to others) or cannot be written. Only
// the grader's user (or root) can change what is in it; a grade's processes run as other users
// in the sandbox, and without one as that user, who could change the project itself anyway.
function keptExecuteOnlyNode(cache: string): string | undefined {
  try {
    try {
      mkdirSync(cache, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
    }
    const dir = lstatSync(cache);
    if (!dir.isDirectory() || (process.getuid && dir.uid !== process.getuid()) || (dir.mode & 0o077) !== 0) return undefined;
    const source = statSync(process.execPath);
    const name = `node-${source.dev}-${source.ino}-${source.size}-${Math.trunc(source.mtimeMs)}`;
    const kept = join(cache, name);
    const st = lstatSync(kept, { throwIfNoEntry: false });
    if (st && st.isFile() && (st.mode & 0o7777) === 0o111 && st.size === source.size && (!process.getuid || st.uid === process.getuid())) return kept;
    // Missing or not as made: made again, and the copies of other Node binaries dropped.
    for (const entry of readdirSync(cache)) if (entry.startsWith("node-")) rmSync(join(cache, entry), { force: true });
    const temp = join(cache, `.${name}.${process.pid}`);
    copyFileSync(process.execPath, temp);
    chmodSync(temp, 0o111);
    renameSync(temp, kept);
    return kept;
  } catch {
    return undefined;
  }
}
