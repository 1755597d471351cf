// 待办 1（见 mcp-client.ts 顶部的索引）。可以用这个模块，也可以全写在 mcp-client.ts 里。
// TODO(实现 MCP pending request map): 每个请求一条记录，拥有自己的 timer 与 abort 监听器；
// 响应、远端错误、超时、取消、写失败、进程退出和 close 都只走同一个 settle()，
// 以 Map 删除作为“只完成一次”的提交点。
import { todo } from "./todo.ts";

export type Outcome = { ok: true; value: unknown } | { ok: false; error: Error };
export type ExpireReason = "timeout" | "abort";

export interface PendingRecord {
  readonly id: number;
  readonly method: string;
  readonly startedAt: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  timer?: ReturnType<typeof setTimeout>;
  signal?: AbortSignal;
  written?: boolean;
  onAbort?: () => void;
}

export interface OpenOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  expireError: (record: PendingRecord, reason: ExpireReason, abortReason?: unknown) => Error;
  onExpire?: (record: PendingRecord, reason: ExpireReason) => void;
}

export class PendingTable {
  get size(): number {
    return todo("实现 MCP pending request map: size");
  }
  has(_id: number): boolean {
    return todo("实现 MCP pending request map: has");
  }
  get(_id: number): PendingRecord | undefined {
    return todo("实现 MCP pending request map: get");
  }
  // TODO(timeout): the record's timer expires it as MCP_TIMEOUT. TODO(abort): so does its signal.
  open(_id: number, _method: string, _options: OpenOptions): Promise<unknown> {
    return todo("实现 MCP pending request map: 先建 timer、listener 与 Map 记录，再写请求");
  }
  settle(_id: number, _outcome: Outcome): boolean {
    return todo("实现 MCP pending request map: 删除记录、清 timer、移除 listener，再 resolve/reject");
  }
  rejectAll(_makeError: (record: PendingRecord) => Error): number {
    return todo("实现 MCP pending request map: 对快照逐个 settle");
  }
}
