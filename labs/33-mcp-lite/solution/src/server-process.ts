// The server process: spawn without a shell, a minimal environment, a bounded stderr
// tail, a send path that respects backpressure, and the shutdown ladder
// (end stdin → SIGTERM → SIGKILL) whose promise resolves only once the process is gone.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { StderrTail } from "./stderr-tail.ts";

/** How long to wait, after the server exited, for its pipes to deliver their last bytes. */
export const EXIT_DRAIN_MS = 200;
/** How long to wait for leftover members of the server's process group to disappear. */
export const GROUP_REAP_MS = 1_000;

const isWindows = process.platform === "win32";

// #region lesson:env-allowlist
// Variables a program needs to start at all on each platform. Everything else of
// process.env (tokens, proxies, HOME, debug switches) stays with the client.
const ENV_ALLOWLIST: readonly string[] = isWindows
  ? ["PATH", "Path", "PATHEXT", "SystemRoot", "SystemDrive", "windir", "ComSpec", "TEMP", "TMP"]
  : ["PATH"];

export function buildServerEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENV_ALLOWLIST) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}
// #endregion lesson:env-allowlist

export interface ExitInfo {
  exitCode: number | null;
  signal: string | null;
}

export interface ServerProcessOptions {
  executable: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  maxStderrBytes: number;
  onStdout: (chunk: Buffer) => void;
  /** The stdin pipe failed (the server stopped reading); called at most once. */
  onWriteError: (error: Error) => void;
  /** The process is gone and its pipes are drained; called exactly once after start(). */
  onExit: (info: ExitInfo) => void;
}

interface QueuedLine {
  line: string;
  beforeWrite: (() => boolean) | undefined;
  /** Says whether the line is still worth sending; false lets it leave the queue early. */
  wanted: (() => boolean) | undefined;
}

// Processes still running, killed if the client's own process exits first, so a crashing
// agent does not strand its servers.
const live = new Set<ServerProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const server of live) server.killNow();
  });
}

export class ServerProcess {
  readonly stderr: StderrTail;
  private readonly options: ServerProcessOptions;
  private child: ChildProcessWithoutNullStreams | undefined;
  private exitInfo: ExitInfo | undefined;
  private readonly exited: Promise<void>;
  private markExited!: () => void;
  private blocked = false;
  private queue: QueuedLine[] = [];
  /** Queue length at which send() next drops settled lines (see send). */
  private discardAt = 0;
  /** stdin is corked until the end of the current tick (see write). */
  private corked = false;
  private writeFailed = false;
  private killTimer: ReturnType<typeof setTimeout> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: ServerProcessOptions) {
    this.options = options;
    this.stderr = new StderrTail(options.maxStderrBytes);
    this.exited = new Promise((resolve) => (this.markExited = resolve));
  }

  /** The process id while the process runs; undefined as soon as its exit was observed. */
  get pid(): number | undefined {
    return this.hasExited ? undefined : this.child?.pid;
  }

  // True as soon as the process's exit was observed, before its pipes finished draining
  // (a grandchild holding stdout makes that drain take EXIT_DRAIN_MS).
  get hasExited(): boolean {
    const child = this.child;
    return this.exitInfo !== undefined || (child !== undefined && (child.exitCode !== null || child.signalCode !== null));
  }

  /** Lines waiting for 'drain' (backpressure). */
  get queuedLines(): number {
    return this.queue.length;
  }

  // Spawns the program. Resolves once the OS started it; rejects with the spawn error
  // (ENOENT, EACCES, ...) when it could not be started, in which case nothing is running.
  start(): Promise<void> {
    const { executable, args, cwd, env } = this.options;
    return new Promise<void>((resolve, reject) => {
      // #region lesson:spawn
      const child = spawn(executable, args, {
        cwd,
        env,
        shell: false,
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group on Unix, so shutdown reaches grandchildren too.
        detached: !isWindows,
        windowsHide: true,
      });
      // #endregion lesson:spawn
      this.child = child;
      const onSpawnError = (error: Error) => {
        child.removeListener("spawn", onSpawn);
        // A close() that raced the failed spawn armed the SIGKILL timer; no exit will clear it.
        if (this.killTimer !== undefined) clearTimeout(this.killTimer);
        this.killTimer = undefined;
        this.markExited();
        reject(error);
      };
      const onSpawn = () => {
        child.removeListener("error", onSpawnError);
        this.attach(child);
        resolve();
      };
      child.once("error", onSpawnError);
      child.once("spawn", onSpawn);
    });
  }

  // Writes a line now, or queues it while the pipe is full. `beforeWrite` runs right
  // before the line is actually written and may veto it, so a request that timed out while
  // queued is never sent ("ghost request"). `wanted` lets settled lines leave the queue
  // without waiting for 'drain', so the queue holds at most the caller's live requests
  // (maxPending) even when the server never reads again.
  send(line: string, beforeWrite?: () => boolean, wanted?: () => boolean): "written" | "queued" | "dropped" {
    if (!this.child || this.exitInfo || this.writeFailed || this.stopping) return "dropped";
    if (this.blocked) {
      // Scans for settled lines only once the queue doubled since the last scan: a burst
      // of n queued calls costs O(n) in all instead of O(n²), and the queue still holds
      // at most about twice the live requests.
      if (this.queue.length >= this.discardAt) this.discardAt = 2 * Math.max(this.discardUnwanted(), 16);
      this.queue.push({ line, beforeWrite, wanted });
      return "queued";
    }
    if (beforeWrite && !beforeWrite()) return "dropped";
    this.write(line);
    return "written";
  }

  /** Drops queued lines that are no longer wanted; returns how many are left. */
  discardUnwanted(): number {
    if (this.queue.some((entry) => entry.wanted && !entry.wanted())) {
      this.queue = this.queue.filter((entry) => !entry.wanted || entry.wanted());
    }
    return this.queue.length;
  }

  /** Sends only when the pipe has room right now; used for best-effort notices. */
  sendIfIdle(line: string): boolean {
    return !this.blocked && this.send(line) === "written";
  }

  // #region lesson:stop-ladder
  // The shutdown ladder. Idempotent: every caller waits on the same exit.
  stop(graceMs: number): Promise<void> {
    if (this.stopping) return this.stopping;
    this.stopping = (async () => {
      const child = this.child;
      if (!child || this.exitInfo) return this.exited;
      this.queue = [];
      child.stdin.end();
      this.signalGroup("SIGTERM");
      this.killTimer = setTimeout(() => this.signalGroup("SIGKILL"), graceMs);
      await this.exited;
    })();
    return this.stopping;
  }
  // #endregion lesson:stop-ladder

  // Stops reading stdout for good: after a protocol fault nothing the server says can be
  // trusted, and a server still streaming (a 50 MiB line) must not keep costing memory and
  // CPU while the shutdown ladder runs. stderr keeps draining for the exit diagnostics.
  stopReading(): void {
    this.child?.stdout.destroy();
  }

  /** Synchronous last resort, for the client's own process exit. */
  killNow(): void {
    this.signalGroup("SIGKILL");
  }

  private attach(child: ChildProcessWithoutNullStreams): void {
    live.add(this);
    installExitHook();
    child.stdout.on("data", (chunk: Buffer) => this.options.onStdout(chunk));
    child.stderr.on("data", (chunk: Buffer) => this.stderr.push(chunk));
    child.stdin.on("error", (error) => this.failWrites(error));
    child.stdin.on("drain", () => this.flush());
    // Errors after a successful spawn (a failed kill, for instance) must not crash the
    // client; the exit path below still runs.
    child.on("error", () => {});
    child.once("exit", (exitCode, signal) => void this.finishExit({ exitCode, signal }));
  }

  private write(line: string): void {
    const child = this.child!;
    // Lines written in the same tick leave in one writev at the end of it instead of one
    // system call each: a burst of calls costs far fewer syscalls, order is unchanged.
    if (!this.corked) {
      this.corked = true;
      child.stdin.cork();
      process.nextTick(() => {
        this.corked = false;
        child.stdin.uncork();
      });
    }
    const ok = child.stdin.write(line, (error) => {
      if (error) this.failWrites(error);
    });
    if (!ok) this.blocked = true;
  }

  private flush(): void {
    this.blocked = false;
    while (!this.blocked && this.queue.length > 0 && !this.writeFailed) {
      const next = this.queue.shift()!;
      if (!next.beforeWrite || next.beforeWrite()) this.write(next.line);
    }
    if (this.queue.length === 0) this.discardAt = 0;
  }

  private failWrites(error: Error): void {
    if (this.writeFailed) return;
    this.writeFailed = true;
    this.queue = [];
    this.options.onWriteError(error);
  }

  // Runs once when the process exited: waits (bounded) for the pipes to deliver what the
  // server wrote before dying, removes leftovers of its process group, then reports.
  // Waits for `exit`, not `close`: a grandchild can hold the pipes open forever.
  private async finishExit(info: ExitInfo): Promise<void> {
    const child = this.child!;
    await Promise.all([drained(child.stdout, EXIT_DRAIN_MS), drained(child.stderr, EXIT_DRAIN_MS)]);
    if (this.killTimer !== undefined) clearTimeout(this.killTimer);
    this.killTimer = undefined;
    this.exitInfo = info;
    this.queue = [];
    live.delete(this);
    await this.reapGroup(child.pid!);
    child.stdout.destroy();
    child.stderr.destroy();
    child.stdin.destroy();
    this.options.onExit(info);
    this.markExited();
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const child = this.child;
    if (!child || child.pid === undefined || this.exitInfo) return;
    try {
      if (isWindows) child.kill(signal);
      else process.kill(-child.pid, signal);
    } catch {
      // ESRCH: already gone. The exit path reports what happened.
    }
  }

  // After the leader exited, anything left in its group is ours to end.
  private async reapGroup(pgid: number): Promise<void> {
    if (isWindows) return;
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      return; // no member left: the common case, and the cheap one
    }
    const deadline = Date.now() + GROUP_REAP_MS;
    while (groupHasLiveMembers(pgid) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

// Resolves when the stream ended or after `ms`, whichever comes first.
function drained(stream: NodeJS.ReadableStream & { readableEnded?: boolean; destroyed?: boolean }, ms: number) {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stream.removeListener("end", done);
      stream.removeListener("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stream.once("end", done);
    stream.once("close", done);
  });
}

// A killed process stays a zombie until its new parent reaps it, and not every init does;
// zombies hold no resources, so only members in another state count as alive.
function groupHasLiveMembers(pgid: number): boolean {
  if (process.platform !== "linux") {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return listGroupMembers(pgid).some((member) => member.state !== "Z");
}

export function listGroupMembers(pgid: number): Array<{ pid: number; state: string }> {
  // Only runs when a group outlived its leader. /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."
  const members: Array<{ pid: number; state: string }> = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return members;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid) members.push({ pid: Number(entry), state: fields[0] ?? "?" });
  }
  return members;
}
