// 第 33 课 starter：这是你要改的文件。它能编译，能答对单个请求，错的地方正是本课要讲的。
// Lab 33 starter: the file you change. English: lessons/33-mcp-lite/README.en.md#lab
//
// 哪些文件要改（同一张表在 labs/33-mcp-lite/README.md）：
//   要改：mcp-client.ts（本文件）、pending.ts（TODO 1 的 pending 表）、framing.ts（TODO 9）、stderr-tail.ts（TODO 10）。
//   给定：errors.ts、options.ts、protocol.ts、todo.ts、validate.ts（文件头标着 GIVEN），不用改，直接 import。
//   要不要再拆出别的模块（比如把子进程封装进自己的 server-process.ts）由你决定：评分器只通过
//   src/mcp-client.ts 导出的 McpClient 与 McpError 检查行为。
//
// 待办索引：按顺序做。每一项在代码里用 TODO 加括号里的标签标在要改的地方；做完一项就删掉那一项的
// 全部标记，`npm run grade` 的报告据此区分“还没做”和“有问题”，并给出下一步。
// 评分报告里每个失败的测试下面都写着它属于哪一项（英文报告把第 1 项叫作 pending-map）。
//
//   #  标签                          课程章节   评分检查
//   1  实现 MCP pending request map  §7.1–7.4   evidence/out-of-order, rubric/id-matching, rubric/lifecycle, rubric/handshake, homework/stress-100
//      递增整数 id + Map<id, Pending> 取代 currentResolve；按 id 精确匹配，未知 / 重复 / 字符串 id 一律忽略。
//      写之前：校验调用输入（工具名是非空字符串、参数是普通对象、timeoutMs 是正整数，否则 MCP_INVALID_ARGUMENT，
//      见 validate.ts 与 options.ts 的 resolveCallTimeout），
//      在途数已达 maxPending 就以 MCP_BUSY 拒绝（§7.2、§7.14）；写失败也走同一个 settle。
//   2  timeout                       §7.5       evidence/timeout, rubric/lifecycle
//      每个请求一个计时器，到期经由 settle 以 MCP_TIMEOUT reject 并删除记录；迟到的响应不复活。
//   3  abort                         §7.6       evidence/abort, rubric/lifecycle
//      预先 abort 的 signal 直接 MCP_ABORTED 且不写请求；运行中 abort 走同一个 settle；正常完成也要摘监听器。
//   4  remote-error                  §7.7       evidence/remote-error, rubric/handshake
//      JSON-RPC error → McpError("MCP_ERROR")，保留 remoteCode 与 data；客户端继续可用。
//      不合法的行（不是对象、jsonrpc 不是 "2.0"、result/error 同时有或都没有、stdout 上的杂行）是协议故障：
//      所有 pending 以 MCP_PROTOCOL_ERROR reject，并停止服务器。
//   5  handshake                     §7.8       evidence/happy-path, rubric/handshake
//      initialize 成功前 listTools / callTool 以 MCP_NOT_INITIALIZED 拒绝且不写任何东西；并发 initialize
//      共享一次握手；检查回答，协议版本必须在 SUPPORTED_PROTOCOL_VERSIONS 里（版本协商是必做的，
//      rubric/handshake 会检查），否则失败并停掉子进程；之后才发 notifications/initialized。
//   6  exit                          §7.9       evidence/server-exit, rubric/lifecycle, rubric/process
//      子进程退出时所有 pending 以 MCP_PROCESS_EXIT reject（带 exitCode、signal 和 stderr 尾部：要保留
//      服务器写到 stderr 的内容，不能丢掉；stderr 超过上限后也要继续读走，否则服务器会卡住），
//      initialized 复位，之后 initialize() 可以启动新进程。
//   7  close                         §7.10      rubric/process, probe/orphans, rubric/lifecycle
//      close() 幂等：先拒绝新请求、以 CLIENT_CLOSED 拒绝所有 pending，再 SIGTERM，closeTimeoutMs 后 SIGKILL，
//      等到 exit 才 resolve；并发 close() 共享同一次关闭。任何测试收尾时 close() 没做好，都记在这一项上。
//   8  process                       §7.11      rubric/process
//      spawn 不经 shell（已给出），参数原样传递，环境变量白名单；程序不存在或不可执行时 MCP_SPAWN_FAILED；
//      服务器自成进程组，关闭时整组回收。
//   9  framing                       §7.12      rubric/handshake
//      按字节分行，整行进入内存前执行 maxLineBytes（按字节计）：超长行是协议故障（rubric/handshake 的
//      oversized 一项）；多字节字符可能跨两次读取，要用 StringDecoder 或按整行解码。
//   以下不影响通过与否（作业加分，见 ../../homework/README.md）：
//  10  stderr                        §7.13      homework/bounded-stderr
//  11  notifications                 §10        homework/notifications
//  12  cancel-notice                 §10        homework/cancel-notice
//  13  version-negotiation           §10        homework/version-negotiation
//      （homework/stress-100 没有自己的 TODO：它是第 1 项的 pending 表在 100 个乱序调用下的表现。）

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
    // TODO(实现 MCP pending request map): every request uses id 1, so answers cannot be told apart;
    // register the pending record (timer, listener, map entry) before writing.
    this.child!.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) + "\n");
    return new Promise((resolve) => {
      this.currentResolve = resolve;
    });
  }

  // TODO(实现 MCP pending request map): find the record by the response's integer id.
  // TODO(remote-error): a response with `error` rejects McpError("MCP_ERROR") instead, with
  //   remoteCode and a size-bounded data (errors.ts has boundedErrorData for it).
  // TODO(notifications): a message without an id is a notification; it settles nothing.
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

  /** Entries in the pending map right now. TODO(实现 MCP pending request map): the real map's size. */
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

  /** What was kept of the server's stderr. TODO(stderr): the bounded tail. */
  get stderr(): { text: string; truncated: boolean } {
    return { text: "", truncated: false };
  }

  // TODO(handshake): share one in-flight handshake, check the answer and its protocol version.
  // TODO(version-negotiation): (homework) the refusal names both sides' versions; an older version both support is accepted.
  async initialize(): Promise<InitializeResult> {
    if (!this.child) {
      // TODO(process): a process group of its own (detached), so close() reaches grandchildren.
      // TODO(exit): on "exit", reject every pending call with MCP_PROCESS_EXIT and reset initialized.
      // TODO(framing): a byte-capped line decoder (./framing.ts) instead of readline.
      // TODO(exit): keep what the server writes to stderr instead of discarding it; MCP_PROCESS_EXIT carries its tail.
      // TODO(stderr): bound what is kept to the last maxStderrBytes (./stderr-tail.ts).
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

  // TODO(实现 MCP pending request map): check the input first (name a non-empty string, args a plain
  // object, options an object if given, its timeoutMs a positive integer and its signal an AbortSignal;
  // MCP_INVALID_ARGUMENT) and refuse a call beyond maxPending in flight (MCP_BUSY), writing nothing.
  // TODO(timeout) TODO(abort): options are ignored.
  // TODO(cancel-notice): after a timeout or an abort, tell the server (notifications/cancelled).
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
