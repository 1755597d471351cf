// TODO(扩展: 服务器管理器): 在多个客户端生命周期之上管理同一个服务器：首次使用时才启动；
// 健康检查（initialize + tools/list，或 ping）；失败后按指数退避再启动，连续失败达到上限就隔离；
// 父级 AbortSignal 取消时先让每个调用走正常 settle（MCP_ABORTED），再关闭服务器；崩溃时在途的
// 调用以 MCP_PROCESS_EXIT（outcome "unknown"）失败，绝不重放。参考答案见 solution。
import { todo } from "./todo.ts";
import { McpError } from "./errors.ts";
import type { CallOptions } from "./mcp-client.ts";
import type { McpClientOptions } from "./options.ts";
import type { InitializeResult, Tool } from "./protocol.ts";

export const DEFAULT_BACKOFF_INITIAL_MS = 250;
export const DEFAULT_BACKOFF_FACTOR = 2;
export const DEFAULT_BACKOFF_MAX_MS = 30_000;
export const DEFAULT_MAX_FAILURES = 5;
export const DEFAULT_HEALTH_TIMEOUT_MS = 5_000;

export type ManagerState = "idle" | "starting" | "ready" | "backoff" | "quarantined" | "closed";

export interface ManagedClient {
  readonly initialized: boolean;
  readonly pendingCount: number;
  readonly pid: number | undefined;
  initialize(): Promise<InitializeResult>;
  listTools(options?: CallOptions): Promise<Tool[]>;
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
  ping?(options?: CallOptions): Promise<void>;
  close(): Promise<void>;
}

export interface ServerManagerOptions {
  client: McpClientOptions;
  createClient?: (options: McpClientOptions) => ManagedClient;
  signal?: AbortSignal;
  healthCheck?: "tools" | "ping";
  healthTimeoutMs?: number;
  backoffInitialMs?: number;
  backoffFactor?: number;
  backoffMaxMs?: number;
  maxFailures?: number;
  now?: () => number;
}

export type UnavailableReason = "backoff" | "quarantined";

export class ServerUnavailableError extends McpError {
  readonly reason: UnavailableReason;
  readonly failures: number;
  readonly retryInMs: number | undefined;
  constructor(reason: UnavailableReason, failures: number, retryInMs: number | undefined, cause: unknown) {
    super("MCP_NOT_INITIALIZED", `server unavailable: ${reason}`, { cause, phase: "spawn" });
    this.reason = reason;
    this.failures = failures;
    this.retryInMs = retryInMs;
  }
}

export class ServerManager {
  starts = 0;
  constructor(_options: ServerManagerOptions) {}
  get state(): ManagerState {
    return todo("扩展: 服务器管理器 —— 状态");
  }
  get failures(): number {
    return todo("扩展: 服务器管理器 —— 连续失败次数");
  }
  get activeCalls(): number {
    return todo("扩展: 服务器管理器 —— 在途调用数");
  }
  get pid(): number | undefined {
    return todo("扩展: 服务器管理器 —— pid");
  }
  callTool(_name: string, _args: Record<string, unknown> = {}, _options: CallOptions = {}): Promise<unknown> {
    return todo("扩展: 服务器管理器 —— 懒启动 + 健康检查 + 调用，不重放");
  }
  listTools(_options: CallOptions = {}): Promise<Tool[]> {
    return todo("扩展: 服务器管理器 —— listTools");
  }
  release(): void {
    todo("扩展: 服务器管理器 —— 解除隔离");
  }
  close(): Promise<void> {
    return todo("扩展: 服务器管理器 —— 先 abort 所有调用，再关闭服务器");
  }
}
