// The raw floor: the least work a newline-JSON round trip over a pipe can take in Node.
// One map from id to promise callbacks, no validation, no timers, no caps, no stderr
// handling. It is not a usable client (a hostile server can make it hang or eat memory);
// it is the physical limit the reference client is measured against.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export class FloorClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiters = new Map<number, Waiter>();
  private readonly exited: Promise<void>;
  private nextId = 1;
  private partial: Buffer[] = [];

  // Spawns the server at once; call initialize() before anything else.
  constructor(executable: string, args: string[]) {
    this.child = spawn(executable, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdout.on("data", (chunk: Buffer) => this.onData(chunk));
    this.child.stderr.resume();
  }

  async initialize(): Promise<unknown> {
    const result = await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bench-floor", version: "1.0.0" },
    });
    this.child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    return result;
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiters.set(id, { resolve, reject });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  // Ends stdin and waits for the process to exit; SIGKILL if it takes longer than a second.
  async close(): Promise<void> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 1_000);
    await this.exited;
    clearTimeout(timer);
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      let line: string;
      if (this.partial.length === 0) {
        line = chunk.toString("utf8", start, nl);
      } else {
        this.partial.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.partial).toString("utf8");
        this.partial = [];
      }
      start = nl + 1;
      const message = JSON.parse(line);
      const waiter = this.waiters.get(message.id);
      if (!waiter) continue;
      this.waiters.delete(message.id);
      if ("error" in message) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    }
    if (start < chunk.length) this.partial.push(chunk.subarray(start));
  }
}
