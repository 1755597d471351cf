// What a failing homework check tells the learner, in Simplified Chinese (default) or
// English (LAB_LANG=en). Kept apart from the evidence tests' catalog: homework is bonus.

import { filler } from "../../../grader/message-template.ts";

const catalog = {
  noNotification: {
    zh: "onNotification 应依次收到 {expected}，实际收到 {actual}（notification 没有 id，只交给回调，不能 settle 任何请求）",
    en: "onNotification should receive {expected} in order, got {actual} (a notification has no id: it goes to the callback and settles no request)",
  },
  notificationSettled: {
    zh: "echo 调用应 resolve 为 {expected}，实际是 {actual}：notification 被当成了响应？",
    en: "the echo call should resolve with {expected}, got {actual}: was a notification taken for a response?",
  },
  noCancelNotice: {
    zh: "{when}后服务器应收到 notifications/cancelled {requestId: {id}, reason: 字符串}，实际收到 {actual}",
    en: "after {when} the server should receive notifications/cancelled {requestId: {id}, reason: string}, got {actual}",
  },
  cancelForUnsent: {
    zh: "预先 abort 的请求从未发送，不应再发取消通知，实际发了 {actual}",
    en: "a pre-aborted request was never sent and needs no cancellation notice, but {actual} was sent",
  },
  stderrDefault: {
    zh: "没有设置 maxStderrBytes 时应保留最后 65536 字节（默认 64 KiB）并标记 truncated，实际保留了 {bytes} 字节，truncated={truncated}",
    en: "without maxStderrBytes the client should keep the last 65536 bytes (the 64 KiB default) and mark it truncated; it kept {bytes} bytes, truncated={truncated}",
  },
  stderrTooBig: {
    zh: "client.stderr.text 有 {bytes} 字节，超过 maxStderrBytes={max}（按 Buffer 字节计，不是字符数）",
    en: "client.stderr.text holds {bytes} bytes, over maxStderrBytes={max} (count Buffer bytes, not characters)",
  },
  stderrNotTruncated: {
    zh: "丢弃了旧的 stderr 字节后 client.stderr.truncated 应为 true",
    en: "client.stderr.truncated should be true once older stderr bytes were dropped",
  },
  stderrBroken: {
    zh: "stderr 尾部含有替换字符 U+FFFD：截断切坏了多字节的中文字符（应在 UTF-8 字符边界处截断）",
    en: "the stderr tail contains U+FFFD: the cut split a multi-byte character (cut on a UTF-8 boundary)",
  },
  stderrTail: {
    zh: "stderr 应恰好保留最后 maxStderrBytes 个字节里的完整字符（崩溃原因通常在最后）：应为 {expected}，实际是 {actual}",
    en: "stderr should keep exactly the whole characters of the last maxStderrBytes bytes (crash reasons come last): expected {expected}, got {actual}",
  },
  stderrMidCharacter: {
    zh: "服务器写到一半的多字节字符不属于 stderr 尾部：已写入 {written} 时 client.stderr.text 应以 {expected} 结尾，实际结尾是 {actual}（末尾不完整的 UTF-8 序列先不解码，等剩下的字节到了再显示；完整的字符要保留）",
    en: "a multi-byte character the server is still writing is not part of the stderr tail yet: with {written} written, client.stderr.text should end with {expected}, it ends with {actual} (leave an unfinished UTF-8 sequence at the end undecoded until its other bytes arrive; keep whole characters)",
  },
  exitStderr: {
    zh: "MCP_PROCESS_EXIT 的 error.stderr 应是不超过 {max} 字节、以 {expected} 结尾的尾部，实际是 {actual}",
    en: "error.stderr of MCP_PROCESS_EXIT should be a tail of at most {max} bytes ending with {expected}, got {actual}",
  },
  versionMessage: {
    zh: "协商失败的错误信息应同时写出服务器的版本 {server} 和客户端支持的版本（如 {client}），实际是：{actual}",
    en: "the negotiation error should name the server's version {server} and the client's (e.g. {client}); got: {actual}",
  },
  versionChildAlive: {
    zh: "协商失败后子进程 {pids} 仍在运行：握手失败必须停止它启动的子进程",
    en: "server process {pids} still runs after the failed negotiation: a failed handshake must stop the child it started",
  },
  versionOlder: {
    zh: "服务器只支持 {version} 且客户端也支持它时，initialize 应成功并返回该版本，实际是 {actual}",
    en: "when the server only speaks {version} and the client supports it, initialize should succeed with it; got {actual}",
  },
  stressMismatch: {
    zh: "第 {index} 个调用应得到 {expected}，实际是 {actual}（响应必须按 id 精确匹配）",
    en: "call {index} should resolve with {expected}, got {actual} (responses must be matched by id)",
  },
  // ---- labels: the calls, waits and situations the messages name (code stays code) ----
  lblMarkerInStderr: { zh: "client.stderr 中出现 {marker}", en: "{marker} in client.stderr" },
  lblLastStderrLine: { zh: "client.stderr 中出现服务器最后一行 stderr", en: "the server's last stderr line in client.stderr" },
  tailBytes: { zh: "{bytes} 字节 …{tail}", en: "{bytes} bytes …{tail}" },
  whenBoundedStderr: { zh: "有界 stderr 测试", en: "bounded stderr" },
  whenDefaultStderrCap: { zh: "默认 stderr 上限测试", en: "default stderr cap" },
  lblCancelAfterTimeout: { zh: "超时之后的 notifications/cancelled", en: "notifications/cancelled after the timeout" },
  lblServerGotCall: { zh: "服务器收到这个调用", en: "the server receiving the call" },
  lblAbortedCall: { zh: "被 abort 的 callTool", en: "aborted callTool" },
  lblCancelAfterAbort: { zh: "abort 之后的 notifications/cancelled", en: "notifications/cancelled after the abort" },
  whenAbort: { zh: "abort ", en: "abort" },
  lblPreAborted: { zh: "预先 abort 的 callTool", en: "pre-aborted callTool" },
  whenCancelNotice: { zh: "取消通知测试", en: "cancel notice" },
  whenNotifications: { zh: "通知测试", en: "notifications" },
  whenHundredCalls: { zh: "100 个调用", en: "100 calls" },
  lblInitVersionServer: { zh: "对只支持 {version} 的服务器调用 initialize()", en: "initialize() against a {version} server" },
  whenVersionNegotiation: { zh: "版本协商", en: "version negotiation" },
} as const;

export type HomeworkMessage = keyof typeof catalog;

const fill = filler<HomeworkMessage>(catalog);

/** Fills a homework message with its parameters in the learner's language (LANG). */
export function hw(key: HomeworkMessage, values: Record<string, unknown> = {}): string {
  return fill(key, values);
}
