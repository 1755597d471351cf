// What a failing evidence test tells the learner, in Simplified Chinese (default) or
// English (LAB_LANG=en). The grader shows these messages as they are.

import { filler } from "../../../grader/message-template.ts";

export { LANG, say, type Lang } from "../../../grader/message-template.ts";

const catalog = {
  hostEnded: {
    zh: "客户端所在的进程意外结束了（exit {code}，信号 {signal}）：提交的代码让它崩溃或退出了{oom}",
    en: "the process the client runs in ended unexpectedly (exit {code}, signal {signal}): the submission's code crashed or exited it{oom}",
  },
  hostOom: {
    zh: "；它耗尽了内存（堆上限 {mb} MiB）",
    en: "; it ran out of memory (heap limit {mb} MiB)",
  },
  hostGone: {
    zh: "客户端所在的进程已经结束，这个客户端不能再用",
    en: "the process the client ran in has ended; this client cannot be used any more",
  },
  hostStuck: {
    zh: "客户端所在的进程用掉了 {ms} ms 的 CPU 时间仍没有应答：提交的代码卡在一个从不让出的循环里？",
    en: "the process the client runs in used {ms} ms of CPU time without answering: is the submission stuck in a loop that never yields?",
  },
  hostLastGiven: {
    zh: "（它停止应答前最后收到的是：{what}；从这些方法查起）",
    en: " (the last it was given before it stopped answering: {what}; start looking there)",
  },
  hostBlocked: {
    zh: "客户端所在的进程 {ms} ms 内既没有应答，也几乎没有用 CPU：提交的代码卡在一个永远不返回的同步等待里？",
    en: "the process the client runs in neither answered nor used any CPU time to speak of for {ms} ms: is the submission stuck in a synchronous wait that never returns?",
  },
  hostSlow: {
    zh: "客户端所在的进程 {ms} ms 内没有应答，其间只用了 {cpu} ms 的 CPU 时间：提交的代码在一次同步调用里等得太久，或者这台机器负载过重",
    en: "the process the client runs in did not answer within {ms} ms, using only {cpu} ms of CPU time meanwhile: the submission waits too long inside one synchronous call, or this machine is overloaded",
  },
  hostNoAnswer: {
    zh: "客户端所在的进程 {ms} ms 内没有应答",
    en: "the process the client runs in did not answer within {ms} ms",
  },
  hung: {
    zh: "挂起：{label} 在 {ms} ms 内既没有 resolve 也没有 reject",
    en: "hung: {label} never settled within {ms} ms",
  },
  hungStill: {
    zh: "挂起：{label} 再也不会完成：客户端没有计时器或进行中的 I/O，服务器也已无事可做（请求全部读完、输出全部送达），没有任何事件能让它 resolve 或 reject",
    en: "hung: {label} can never settle: the client has no timer or I/O in progress and the server has nothing left to do (every request read, all output delivered), so no event can resolve or reject it",
  },
  shouldReject: {
    zh: "{label} 应该 reject，却 resolve 成了 {value}",
    en: "{label} should have rejected, but resolved with {value}",
  },
  wrongCode: {
    zh: "{label} 应以 code {expected} reject，实际是 {actual}",
    en: "{label} should reject with code {expected}, got {actual}",
  },
  wrongValue: {
    zh: "{label} 的结果应为 {expected}，实际是 {actual}",
    en: "{label} should resolve with {expected}, got {actual}",
  },
  pendingLeft: {
    zh: "{when}后 pendingCount 是 {count}，应为 0（pending map 里的记录没有删除）",
    en: "after {when}, pendingCount is {count}; expected 0 (an entry was never deleted from the pending map)",
  },
  listenersLeft: {
    zh: "{when}后 AbortSignal 上还挂着 {count} 个 abort 监听器（没有 removeEventListener）",
    en: "after {when}, {count} abort listener(s) are still attached to the AbortSignal (never removed)",
  },
  timersLeft: {
    zh: "{when}后客户端还留着 {count} 个计时器：{where}",
    en: "after {when}, the client still holds {count} timer(s): {where}",
  },
  aliveAfterClose: {
    zh: "close() 已 resolve，但进程 {pids} 仍然存活（没有等待退出，或没有结束子进程）",
    en: "close() resolved but process(es) {pids} are still alive (close did not wait for exit, or did not stop them)",
  },
  wroteAfterAbort: {
    zh: "signal 已经 abort，客户端仍把请求写给了服务器：{what}",
    en: "the signal was already aborted, yet the client wrote the request to the server: {what}",
  },
  notInitializedAfterError: {
    zh: "远端 JSON-RPC error 只是业务失败，客户端应保持 initialized=true 并继续工作",
    en: "a JSON-RPC error is a business failure: the client should stay initialized and keep working",
  },
  restartedOnError: {
    zh: "远端 error 后服务器被重启了（pid {before} → {after}），业务错误不应影响进程",
    en: "the server was restarted after a remote error (pid {before} → {after}); a business error must not touch the process",
  },
  stillInitialized: {
    zh: "服务器退出后 initialized 仍为 true",
    en: "initialized is still true after the server exited",
  },
  exitDetails: {
    zh: "MCP_PROCESS_EXIT 应带上 exitCode {code} 和 stderr 尾部（包含 {text}），实际 exitCode={actualCode}，stderr={actualStderr}",
    en: "MCP_PROCESS_EXIT should carry exitCode {code} and the stderr tail (containing {text}); got exitCode={actualCode}, stderr={actualStderr}",
  },
  remoteDetails: {
    zh: "MCP_ERROR 应保留远端 code {code} 与 data，实际 remoteCode={actualCode}，data={actualData}",
    en: "MCP_ERROR should keep the remote code {code} and data; got remoteCode={actualCode}, data={actualData}",
  },
  lateAnswerMatched: {
    zh: "超时请求的迟到响应被交给了新的请求：得到 {actual}",
    en: "a late answer to a timed-out request was handed to a newer request: got {actual}",
  },
  notRestartable: {
    zh: "服务器退出后再次 initialize() 应启动一个新的服务器进程",
    en: "initialize() after the server exited should start a fresh server process",
  },
  replayed: {
    zh: "退出时挂起的请求被重放给了新服务器（服务器共收到 {count} 次 never 调用，应为 1 次）",
    en: "a request pending at the exit was replayed to the new server (the server received never {count} times; expected once)",
  },
  needsTodo: {
    zh: "需要先完成 TODO({todo})：{detail}",
    en: "needs TODO({todo}) first: {detail}",
  },
  closeDuringCleanup: {
    zh: "测试收尾时的 close()",
    en: "close() during cleanup",
  },
} as const;

export type MessageKey = keyof typeof catalog;

/** Fills a catalogue message with its parameters in the chosen language (default LANG). */
export const msg = filler<MessageKey>(catalog);

/** A label of code with a note after `//`: the code as it is, the note (already in the learner's language) after it. */
export function noted(code: string, note: string): string {
  return `${code} // ${note}`;
}
