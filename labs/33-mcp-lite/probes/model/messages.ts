// What the model-based probe tells the learner, in Simplified Chinese (default) or English.

import { filler } from "../../../../grader/message-template.ts";

const catalog = {
  outcome: { zh: "{step}：按契约应为 {expected}，实际是 {actual}", en: "{step}: the contract says {expected}; got {actual}" },
  otherAnswer: { zh: "{step}：拿到了另一个调用的结果 {actual}（应为 {expected}）", en: "{step}: got another call's answer {actual} (expected {expected})" },
  pending: { zh: "{step} 之后 pendingCount 是 {actual}，按模型应为 {expected}", en: "after {step}, pendingCount is {actual}; the model says {expected}" },
  initialized: { zh: "{step} 之后 initialized 是 {actual}，按模型应为 {expected}", en: "after {step}, initialized is {actual}; the model says {expected}" },
  ids: { zh: "请求 id 不是严格递增的整数：服务器依次收到 {ids}", en: "request ids are not strictly increasing integers: the server received {ids}" },
  wrote: { zh: "{step}：这个请求不应被写给服务器（{why}），服务器却收到了它", en: "{step}: this request must not reach the server ({why}), yet the server received it" },
  alive: { zh: "{step} 之后，按契约不应再有服务器进程，进程 {pids} 仍然存活", en: "after {step}, no server process should be left, yet {pids} are alive" },
  noNotice: { zh: "{step}：握手成功，服务器却没有在 initialize 响应之后收到 notifications/initialized", en: "{step}: the handshake succeeded, but the server never got notifications/initialized after the initialize answer" },
  listeners: { zh: "{step} 之后 AbortSignal 上还有 {count} 个 abort 监听器", en: "after {step}, {count} abort listener(s) remain on the AbortSignal" },
  inspectArgs: { zh: "{step}：参数没有原样到达服务器：发送 {expected}，收到 {actual}", en: "{step}: the arguments did not arrive verbatim: sent {expected}, received {actual}" },
  inspectPath: { zh: "{step}：服务器的 PATH 应与客户端的相同（allowlist 至少包含 PATH），实际是 {actual}", en: "{step}: the server's PATH should be the client's (the allowlist holds at least PATH); it is {actual}" },
  inspectEnv: { zh: "{step}：评分进程环境里的 {names} 到达了服务器（只允许 PATH、平台必需的变量和配置的 env）", en: "{step}: {names} from the grader's environment reached the server (only PATH, what the platform needs and the configured env may)" },
  badOption: { zh: "{step}：new McpClient(...) 应同步抛出 MCP_INVALID_ARGUMENT，实际是 {actual}", en: "{step}: new McpClient(...) should throw MCP_INVALID_ARGUMENT at once; got {actual}" },
  earlyNotice: { zh: "{step}：握手失败了，服务器却收到了 notifications/initialized：它只能在 initialize 成功应答之后发送", en: "{step}: the handshake failed, yet the server got notifications/initialized: it may only be sent after a successful initialize answer" },
  doubleInit: { zh: "{step}：并发的 initialize() 应共用一次握手，服务器却收到了 {count} 个 initialize 请求", en: "{step}: concurrent initialize() calls should share one handshake, yet the server got {count} initialize requests" },
  shell: { zh: "{step}：服务器应由客户端直接启动（不经过 shell），实际是 {what}", en: "{step}: the client should start the server itself (no shell in between); got {what}" },
  timers: { zh: "{step} 之后，客户端还留着 {count} 个计时器（{where}）：每个请求结束时都要清掉它的计时器", en: "after {step}, {count} timer(s) of the client remain ({where}): every request must clear its timer when it settles" },
  noSigterm: { zh: "{step}：服务器在被强制结束之前没有收到 SIGTERM：close() 要先请服务器退出（SIGTERM），超过 closeTimeoutMs 仍未退出才发 SIGKILL", en: "{step}: the server got no SIGTERM before it was forced to stop: close() must first ask it to exit (SIGTERM), and send SIGKILL only once closeTimeoutMs has passed" },
  exitSignal: { zh: "{step}：服务器被 {expected} 结束，MCP_PROCESS_EXIT 的 signal 应为 {expected}，实际是 {actual}", en: "{step}: {expected} ended the server, so MCP_PROCESS_EXIT's signal should be {expected}; got {actual}" },
  errorData: { zh: "{step}：远端错误 {sent} 字节的 data 被整个保存在 McpError.data 中（{kept} 字节）：data 来自另一个进程，必须限制大小", en: "{step}: the remote error's {sent}-byte data was kept whole in McpError.data ({kept} bytes): it comes from another process and must be size-bounded" },
  allClosed: { zh: "导览和随机序列都已结束，模型创建的每个客户端都已 close()", en: "the tour and the drawn sequences are over; every client the model made is closed" },
  escaped: {
    zh: "{step}：有错误逃逸成了{kind}（真实进程会因此崩溃），而不是让对应的调用以 McpError 失败：{error}",
    en: "{step}: an error escaped as an {kind} (it would crash a real process) instead of failing the call it belongs to with an McpError: {error}",
  },
  uncaught: { zh: "未捕获的异常", en: "uncaught exception" },
  rejection: { zh: "未处理的 Promise 拒绝", en: "unhandled rejection" },
  header: {
    zh: "基于模型的一致性探针（fast-check，种子 {seed}）找到一个违反契约的操作序列，已缩减为 {count} 步，第 {failing} 步出错：",
    en: "The model-based conformance probe (fast-check, seed {seed}) found a sequence of operations that breaks the contract, shrunk to {count} step(s); step {failing} fails:",
  },
  afterRuns: {
    zh: "基于模型的一致性探针（fast-check，种子 {seed}）的每个操作序列都符合契约，但全部结束之后：",
    en: "Every sequence of operations of the model-based conformance probe (fast-check, seed {seed}) conformed to the contract, but once all were over:",
  },
  config: { zh: "客户端选项：{options}", en: "client options: {options}" },
  violation: { zh: "问题：{message}", en: "what went wrong: {message}" },
  trace: { zh: "服务器看到的线路记录（→ 客户端发给服务器，← 服务器发给客户端，最后 {count} 条）：", en: "wire trace as the server saw it (→ client to server, ← server to client; last {count}):" },
  replay: { zh: "重现：npm run grade -- --seed {seed}（同一种子总是得到同一序列）", en: "replay: npm run grade -- --seed {seed} (one seed always gives the same sequence)" },
  elsewhere: { zh: "模型探针发现的问题属于 {dimension}，见那一项", en: "the model probe's finding belongs to {dimension}; see that check" },
} as const;

export type ModelMessage = keyof typeof catalog;

/** Fills a model-probe message in the chosen language (default LANG). */
export const mmsg = filler<ModelMessage>(catalog);
