// ANTI-PATTERNS, kept small on purpose. These clients exist only so the demos can show,
// live, what the lesson warns about. Never copy them into a submission.
//
//   SlotClient        the lesson's "currentResolve": one slot, every call overwrites it
//   FifoClient        answers handed out in send order, ids ignored on the way back
//   RaceTimeoutClient ids and a map, but the deadline is a Promise.race: nothing is cleaned
//                     up, and a dead server is never noticed
//
// All three start the server correctly (spawn without a shell, minimal env) and put real,
// increasing ids on the wire; what they get wrong is everything after the write.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";

export interface Command {
  executable: string;
  args: string[];
}

// What every naive client shares: a child, a readline on stdout, and a writer.
abstract class NaiveConnection {
  protected child: ChildProcessWithoutNullStreams | undefined;
  protected nextId = 1;
  private readonly command: Command;
  private markExited!: (info: { exitCode: number | null; signal: string | null }) => void;
  /** Resolves when the child exits. Only the demo watches it; the naive clients ignore it. */
  readonly exited = new Promise<{ exitCode: number | null; signal: string | null }>((resolve) => (this.markExited = resolve));

  constructor(command: Command) {
    this.command = command;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  protected start(): void {
    const child = spawn(this.command.executable, this.command.args, {
      shell: false,
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stderr.resume();
    child.stdin.on("error", () => {}); // a demo must not crash on EPIPE
    child.once("exit", (exitCode, signal) => this.markExited({ exitCode, signal }));
    createInterface({ input: child.stdout }).on("line", (line) => this.onLine(line));
    this.child = child;
  }

  protected write(message: Record<string, unknown>): void {
    this.child?.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  }

  protected abstract onLine(line: string): void;
  protected abstract call(method: string, params: unknown): Promise<unknown>;

  async initialize(): Promise<unknown> {
    this.start();
    const result = await this.call("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "naive-demo-client", version: "0.0.0" },
    });
    this.write({ method: "notifications/initialized" });
    return result;
  }

  callTool(name: string, args: Record<string, unknown> = {}): Promise<unknown> {
    return this.call("tools/call", { name, arguments: args });
  }

  // The naive close: send SIGTERM and return at once. Nothing waits for the exit, nothing
  // escalates to SIGKILL, and only the leader gets the signal, not its process group.
  async close(): Promise<void> {
    this.child?.kill("SIGTERM");
  }

  /** Demo teardown only (not part of the anti-pattern): stop listening to the child. */
  dispose(): void {
    this.child?.stdout.destroy();
    this.child?.stderr.destroy();
    this.child?.stdin.destroy();
  }
}

// #region lesson:slot-client
// The lesson's failing implementation: one "current" resolver. The second call overwrites
// the first one's resolver, so the first promise can never settle.
export class SlotClient extends NaiveConnection {
  private currentResolve: ((value: unknown) => void) | undefined;

  protected call(method: string, params: unknown): Promise<unknown> {
    this.write({ id: this.nextId++, method, params });
    return new Promise((resolve) => {
      this.currentResolve = resolve;
    });
  }

  protected onLine(line: string): void {
    this.currentResolve?.(JSON.parse(line).result);
  }
}
// #endregion lesson:slot-client

// #region lesson:fifo-client
// "Fixes" the overwrite with a queue: every call gets an answer, but the answers are handed
// out in the order the calls were sent, so an out-of-order server swaps them.
export class FifoClient extends NaiveConnection {
  private readonly waiting: Array<(value: unknown) => void> = [];

  protected call(method: string, params: unknown): Promise<unknown> {
    this.write({ id: this.nextId++, method, params });
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  protected onLine(line: string): void {
    this.waiting.shift()?.(JSON.parse(line).result);
  }
}
// #endregion lesson:fifo-client

interface NaiveEntry {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** The default deadline RaceTimeoutClient arms for every request, like a real client would. */
export const NAIVE_DEFAULT_TIMEOUT_MS = 30_000;

// Matches answers by id (so it survives the swap demo) but ends requests by racing them:
// the caller's promise rejects, while the map entry, its default-deadline timer and the
// abort listener all stay behind. It never listens for the server's exit either.
export class RaceTimeoutClient extends NaiveConnection {
  private readonly entries = new Map<number, NaiveEntry>();

  get pendingCount(): number {
    return this.entries.size;
  }

  protected call(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    const promise = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timeout")), NAIVE_DEFAULT_TIMEOUT_MS);
      this.entries.set(id, { resolve, reject, timer });
    });
    this.write({ id, method, params });
    return promise;
  }

  protected onLine(line: string): void {
    const message = JSON.parse(line);
    const entry = this.entries.get(message.id);
    if (!entry) return;
    this.entries.delete(message.id);
    clearTimeout(entry.timer);
    if (message.error) entry.reject(new Error(message.error.message));
    else entry.resolve(message.result);
  }

  // The per-call deadline and the abort signal, done the "quick" way.
  callWithDeadline(name: string, args: Record<string, unknown>, options: { timeoutMs: number; signal?: AbortSignal }) {
    const request = this.callTool(name, args);
    const cancelled = new Promise<never>((_, reject) => {
      setTimeout(() => reject(Object.assign(new Error("timeout"), { code: "TIMEOUT" })), options.timeoutMs);
      options.signal?.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { code: "ABORTED" })));
    });
    return Promise.race([request, cancelled]);
  }

  /** Demo teardown only: clear the timers this client leaked so the demo process can exit. */
  override dispose(): void {
    for (const entry of this.entries.values()) clearTimeout(entry.timer);
    super.dispose();
  }
}
