// What a failing rubric probe tells the learner, in Simplified Chinese (default) or English.

import { filler } from "../../../grader/message-template.ts";

const catalog = {
  wrongAnswer: { zh: "{label} 拿到了 {actual}，应为 {expected}（响应被交给了错误的请求）", en: "{label} got {actual}; expected {expected} (an answer went to the wrong call)" },
  idsNotIncreasing: { zh: "请求 id 必须是严格递增的整数且从不复用，服务器依次收到的 id 是 {ids}", en: "request ids must be strictly increasing integers, never reused; the server received {ids}" },
  pendingLeft: { zh: "{when}后 pendingCount 是 {count}，应为 0", en: "after {when}, pendingCount is {count}; expected 0" },
  listenersLeft: { zh: "{when}后 AbortSignal 上还有 {count} 个 abort 监听器", en: "after {when}, {count} abort listener(s) remain on the AbortSignal" },
  timersLeft: { zh: "{when}后客户端还留着 {count} 个计时器：{where}", en: "after {when}, the client still holds {count} timer(s): {where}" },
  raceCode: { zh: "timeout 与 abort 同时触发时应以 MCP_TIMEOUT 或 MCP_ABORTED reject，实际是 {actual}", en: "with timeout and abort firing together the call should reject MCP_TIMEOUT or MCP_ABORTED; got {actual}" },
  escaped: { zh: "{when}时有错误逃逸成未处理异常：{error}", en: "an error escaped as an unhandled exception during {when}: {error}" },
  shellUsed: { zh: "启动服务器时使用了 shell：{call}（必须 shell: false）", en: "the server was started through a shell: {call} (shell must be false)" },
  argsMangled: { zh: "参数没有原样到达服务器：发送 {expected}，服务器收到 {actual}", en: "the arguments did not reach the server verbatim: sent {expected}, the server got {actual}" },
  secretLeaked: { zh: "评分进程环境里的 {name} 泄漏给了服务器（环境变量要用 allowlist）", en: "{name} from the grader's environment reached the server (use an env allowlist)" },
  cwdIgnored: { zh: "服务器的工作目录应为配置的 cwd {expected}，实际是 {actual}", en: "the server should run in the configured cwd {expected}; it runs in {actual}" },
  writeFailureResolved: { zh: "写入失败的请求应该 reject，却 resolve 成了 {actual}", en: "a request whose write failed should reject, but resolved with {actual}" },
  envMissing: { zh: "配置的 env.{name} 没有传给服务器", en: "the configured env.{name} did not reach the server" },
  aliveAfterClose: { zh: "{which} resolve 时进程 {pids} 仍然存活", en: "process(es) {pids} were still alive when {which} resolved" },
  notInitializedCode: { zh: "{label} 在 initialize 之前应以 MCP_NOT_INITIALIZED reject，实际是 {actual}", en: "{label} before initialize should reject MCP_NOT_INITIALIZED; got {actual}" },
  wroteBeforeInit: { zh: "initialize 之前就有请求到达了服务器：{what}", en: "requests reached the server before initialize: {what}" },
  initializeCount: { zh: "服务器收到了 {count} 次 initialize，应为 1 次", en: "the server received initialize {count} times; expected once" },
  initializedCount: { zh: "服务器收到了 {count} 次 notifications/initialized，应为 1 次", en: "the server received notifications/initialized {count} times; expected once" },
  initializedTooEarly: { zh: "notifications/initialized 在 initialize 响应之前就发出了", en: "notifications/initialized was sent before the initialize answer" },
  initializedWithoutAnswer: { zh: "initialize 没有得到响应，客户端却发出了 notifications/initialized", en: "initialize was never answered, yet the client sent notifications/initialized" },
  stillInitialized: { zh: "握手失败后 initialized 仍为 true", en: "initialized is still true after a failed handshake" },
  childNotStopped: { zh: "握手失败后子进程 {pids} 没有被停止", en: "the child {pids} was not stopped after the failed handshake" },
  faultCode: { zh: "{label} 应以 MCP_PROTOCOL_ERROR reject（服务器违反了协议：{fault}），实际是 {actual}", en: "{label} should reject with MCP_PROTOCOL_ERROR (the server broke the protocol: {fault}); got {actual}" },
  serverNotStopped: { zh: "协议错误（{fault}）之后服务器进程 {pids} 没有被停止", en: "the server process {pids} was not stopped after the protocol fault ({fault})" },
  initializedAfterFault: { zh: "协议错误之后 initialized 仍为 true", en: "initialized is still true after a protocol fault" },
  spawnCode: { zh: "{label} 应以 MCP_SPAWN_FAILED reject，且 cause.code 为 {cause}，实际是 code={actual}，cause.code={actualCause}", en: "{label} should reject with MCP_SPAWN_FAILED whose cause.code is {cause}; got code={actual}, cause.code={actualCause}" },
  invalidOption: { zh: "new McpClient({{option}}) 应同步抛出 MCP_INVALID_ARGUMENT，实际是 {actual}", en: "new McpClient({{option}}) should throw MCP_INVALID_ARGUMENT at once; got {actual}" },
  invalidInput: { zh: "{label} 应以 MCP_INVALID_ARGUMENT reject 且不写任何东西，实际是 {actual}", en: "{label} should reject with MCP_INVALID_ARGUMENT and write nothing; got {actual}" },
  wroteInvalid: { zh: "非法的调用参数仍被写给了服务器：{what}", en: "an invalid call was still written to the server: {what}" },
  spawnedOnInvalid: { zh: "非法选项仍然启动了进程：{what}", en: "invalid options still started a process: {what}" },
  busyCode: { zh: "已有 maxPending={max} 个请求在途时，新的调用应以 MCP_BUSY reject，实际是 {actual}", en: "with maxPending={max} requests in flight a new call should reject MCP_BUSY; got {actual}" },
  shellBetween: { zh: "客户端与服务器之间运行了别的程序：实际启动的是 {what}（必须直接 spawn(executable, args)，不经过 shell）", en: "something ran between the client and the server: what was started is {what} (spawn(executable, args) directly, no shell)" },
  notDirectChild: { zh: "服务器的父进程不是客户端所在进程，而是 {parent}（中间夹着 shell 或别的程序）", en: "the server's parent is not the client's process but {parent} (a shell or another program in between)" },
} as const;

export type ProbeMessage = keyof typeof catalog;

/** Fills a probe message with its parameters in the chosen language (default LANG). */
export const pmsg = filler<ProbeMessage>(catalog);
