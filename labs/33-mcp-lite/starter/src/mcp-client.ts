// Lab 33 starter. It compiles, it answers a single request, and it is wrong in exactly
// the ways the lesson is about. Run `npm run lab:starter` to watch five evidence tests
// fail, then replace UnsafeClient with a real pending map (see the TODOs, in order).
//
// TODO(实现 MCP pending request map): 用单调递增的整数 id + Map<id, Pending> 取代 currentResolve；
//   响应按 id 精确匹配，未知 / 重复 / 字符串 id 一律忽略（见 ./pending.ts）。
// TODO(timeout): 每个请求独立计时器，到期 settle 为 MCP_TIMEOUT 并从 Map 删除。
// TODO(abort): 预先 abort 的 signal 直接 MCP_ABORTED 且不写请求；运行中 abort 走同一个 settle，
//   正常完成时也要 removeEventListener。
// TODO(remote-error): JSON-RPC error → McpError("MCP_ERROR")，保留 remoteCode 与 data，客户端继续可用。
// TODO(exit): 子进程退出时所有 pending 以 MCP_PROCESS_EXIT reject（带 exitCode / stderr 尾部），
//   initialized 复位，之后 initialize() 可以启动新进程。
// TODO(handshake): initialize 成功之前 listTools / callTool 必须以 MCP_NOT_INITIALIZED 拒绝；
//   并发 initialize 共享同一个握手。
// TODO(close): close() 幂等，先以 CLIENT_CLOSED 拒绝所有 pending，再 SIGTERM，超时 SIGKILL，等 exit。
// TODO(framing): 用有字节上限的解码器代替 readline（见 ./framing.ts）。

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { McpError } from "./errors.ts";
import { resolveOptions, type McpClientOptions, type ResolvedOptions } from "./options.ts";
import type { InitializeResult, Tool } from "./protocol.ts";

export { McpError, type McpErrorCode } from "./errors.ts";
export * from "./options.ts";
export type { InitializeResult, Tool } from "./protocol.ts";

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export type ClientState = "idle" | "starting" | "ready" | "closing" | "closed";

// The anti-pattern from the lesson: one slot for "the current request". A second call
// overwrites the first one's resolve; an answer goes to whoever called last; an error,
// a timeout or a dead server leaves the promise pending forever.
class UnsafeClient {
  private currentResolve?: (value: unknown) => void;
  protected child?: ChildProcessWithoutNullStreams;

  protected call(method: string, params: unknown): Promise<unknown> {
    // TODO(实现 MCP pending request map): every request uses id 1, so answers cannot be told apart.
    this.child!.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) + "\n");
    return new Promise((resolve) => {
      this.currentResolve = resolve;
    });
  }

  protected onLine(line: string): void {
    this.currentResolve?.(JSON.parse(line).result);
  }

  protected get waiting(): boolean {
    return this.currentResolve !== undefined;
  }
}

export class McpClient extends UnsafeClient {
  private readonly options: ResolvedOptions;
  private ready = false;

  constructor(options: McpClientOptions) {
    super();
    this.options = resolveOptions(options);
  }

  /** Entries in the pending map right now. TODO: the real map's size. */
  get pendingCount(): number {
    return 0;
  }

  get pid(): number | undefined {
    return this.child?.exitCode === null ? this.child.pid : undefined;
  }

  get initialized(): boolean {
    return this.ready;
  }

  get state(): ClientState {
    return this.ready ? "ready" : "idle";
  }

  /** TODO(stderr): keep a bounded tail of the server's stderr. */
  get stderr(): { text: string; truncated: boolean } {
    return { text: "", truncated: false };
  }

  async initialize(): Promise<InitializeResult> {
    if (!this.child) {
      const { executable, args, cwd, env } = this.options;
      this.child = spawn(executable, args, { cwd, env: { PATH: process.env.PATH ?? "", ...env }, shell: false });
      this.child.stderr.resume();
      createInterface({ input: this.child.stdout }).on("line", (line) => this.onLine(line));
    }
    const result = (await this.call("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: this.options.clientInfo,
    })) as InitializeResult;
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    this.ready = true;
    return result;
  }

  // TODO(handshake): nothing stops this from running before initialize().
  async listTools(_options: CallOptions = {}): Promise<Tool[]> {
    const result = (await this.call("tools/list", {})) as { tools: Tool[] };
    return result.tools;
  }

  // TODO(timeout) TODO(abort): options are ignored.
  async callTool(name: string, args: Record<string, unknown> = {}, _options: CallOptions = {}): Promise<unknown> {
    if (!this.child) throw new McpError("MCP_NOT_INITIALIZED", "call initialize() first");
    return this.call("tools/call", { name, arguments: args });
  }

  async ping(_options: CallOptions = {}): Promise<void> {
    await this.call("ping", {});
  }

  // TODO(close): pending calls are not rejected, there is no SIGKILL fallback, and a
  // second close() does not wait for the first.
  async close(): Promise<void> {
    const child = this.child;
    this.ready = false;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  }
}
