// Lab 33 manifest: everything the grader knows about this lab. The grader guesses nothing;
// adding a lab means adding a folder with a manifest like this one.
// Hints point at sections of the lesson; the anchors are listed once in LESSON below.

import { checkOf, defineLab, leftoversCheck, type CheckDef, type LabManifest, type TodoDef } from "../../grader/manifest.ts";
import { TEST_TITLES_ZH } from "./test-titles.ts";

const LESSON = "lessons/33-mcp-lite/README.md";

/** Lesson anchors the hints point to. */
export const LESSON_SECTIONS = {
  handshake: `${LESSON}#handshake`,
  idMatching: `${LESSON}#id-matching`,
  settle: `${LESSON}#settle`,
  timeout: `${LESSON}#timeout`,
  abort: `${LESSON}#abort`,
  remoteError: `${LESSON}#remote-error`,
  processExit: `${LESSON}#process-exit`,
  spawn: `${LESSON}#spawn`,
  close: `${LESSON}#close`,
} as const;

// The six evidence tests, then the four rubric dimensions and the orphan probe.
const checks: CheckDef[] = [
  checkOf("evidence/happy-path", "evidence", 10, LESSON_SECTIONS.handshake, {
    title: { zh: "基本流程：initialize → listTools → callTool → close", en: "Happy path: initialize → listTools → callTool → close" },
    standard: { zh: "握手一次、列出 echo、调用成功、close 后无进程", en: "one handshake, echo listed and called, no process after close" },
    deduction: { zh: "握手缺失或 close 不等待退出", en: "missing handshake or close that does not wait" },
    hint: { zh: "重读课程「握手」一节：先 initialize，收到响应后再发 notifications/initialized；close() 要等子进程 exit。", en: "Reread the lesson's handshake section: initialize first, send notifications/initialized after the answer; close() waits for exit." },
  }),
  checkOf("evidence/out-of-order", "evidence", 10, LESSON_SECTIONS.idMatching, {
    title: { zh: "乱序响应按 id 匹配", en: "Out-of-order answers matched by id" },
    standard: { zh: "快请求拿到快结果，慢请求拿到慢结果", en: "the fast call gets the fast answer, the slow call the slow one" },
    deduction: { zh: "假设 FIFO 或只有一个 currentResolve", en: "assuming FIFO, or a single currentResolve" },
    hint: { zh: "重读课程「id 匹配」一节：每个请求一个递增整数 id，Map<id, Pending> 按 id 精确 settle，不能按顺序或工具名匹配。", en: "Reread the id-matching section: one increasing integer id per request, a Map<id, Pending>, settle by exact id — never by order or tool name." },
  }),
  checkOf("evidence/remote-error", "evidence", 10, LESSON_SECTIONS.remoteError, {
    title: { zh: "JSON-RPC error 映射为 MCP_ERROR", en: "A JSON-RPC error becomes MCP_ERROR" },
    standard: { zh: "保留 remoteCode 与 data，客户端继续可用", en: "remoteCode and data kept, the client keeps working" },
    deduction: { zh: "把 error 当成 result，或因业务错误重启进程", en: "treating an error as a result, or restarting the server on a business error" },
    hint: { zh: "重读课程「远端错误」一节：response.error 走同一个 settle 路径，reject McpError(MCP_ERROR)，进程不受影响。", en: "Reread the remote-error section: response.error goes through the same settle path, rejects McpError(MCP_ERROR), the process is untouched." },
  }),
  checkOf("evidence/timeout", "evidence", 10, LESSON_SECTIONS.timeout, {
    title: { zh: "超时：MCP_TIMEOUT 并清理", en: "Timeout: MCP_TIMEOUT and cleanup" },
    standard: { zh: "到期 reject、pending 删除、迟到响应不误配", en: "rejects at the deadline, entry deleted, a late answer matches nothing" },
    deduction: { zh: "悬挂 Promise，或迟到响应交给新请求", en: "a hanging promise, or a late answer handed to a newer call" },
    hint: { zh: "重读课程「超时」一节：每个请求一个计时器，到期先确认 id 仍在 Map，再删除、清计时器、reject MCP_TIMEOUT。", en: "Reread the timeout section: one timer per request; when it fires, check the id is still in the map, delete it, clear up, reject MCP_TIMEOUT." },
  }),
  checkOf("evidence/abort", "evidence", 10, LESSON_SECTIONS.abort, {
    title: { zh: "AbortSignal 取消", en: "AbortSignal cancellation" },
    standard: { zh: "预先 abort 不写请求；运行中 abort 移除监听器", en: "a pre-aborted call writes nothing; an aborted call removes its listener" },
    deduction: { zh: "忽略 signal，或监听器从不移除", en: "ignoring the signal, or never removing the listener" },
    hint: { zh: "重读课程「取消」一节：写请求前检查 signal.aborted；abort 与正常完成都要 removeEventListener。", en: "Reread the abort section: check signal.aborted before writing; remove the listener on abort and on a normal answer alike." },
  }),
  checkOf("evidence/server-exit", "evidence", 10, LESSON_SECTIONS.processExit, {
    title: { zh: "服务器退出：全部 pending reject", en: "Server exit rejects every pending call" },
    standard: { zh: "MCP_PROCESS_EXIT 带 exitCode 与 stderr，之后可重新 initialize", en: "MCP_PROCESS_EXIT with exitCode and stderr; initialize() can start again" },
    deduction: { zh: "退出后 Promise 永久等待", en: "promises wait forever after the exit" },
    hint: { zh: "重读课程「进程退出」一节（7.9）：exit 事件里对 pending Map 做快照并逐个 reject，错误带 exitCode、signal 和服务器写到 stderr 的尾部（要保留 stderr，不能丢弃），initialized 复位。", en: "Reread the process-exit section (7.9): on exit, snapshot the pending map and reject each entry with the exit code, the signal and the tail of what the server wrote to stderr (keep stderr, do not discard it); reset initialized." },
  }),
  checkOf("rubric/id-matching", "rubric", 8, LESSON_SECTIONS.idMatching, {
    title: { zh: "关联", en: "Correlation" },
    standard: { zh: "id → pending 精确匹配", en: "id → pending, matched exactly" },
    deduction: { zh: "假设 FIFO", en: "assuming FIFO" },
    hint: { zh: "重读课程「id 匹配」一节：同一工具的并发调用、字符串 id \"3\"、重复和迟到的响应都不能 settle 错误的请求；id 严格递增、从不复用。", en: "Reread the id-matching section: concurrent calls to one tool, a string id \"3\", duplicate and late answers must never settle the wrong call; ids strictly increase and are never reused." },
  }),
  checkOf("rubric/lifecycle", "rubric", 8, LESSON_SECTIONS.settle, {
    title: { zh: "生命周期", en: "Lifecycle" },
    standard: { zh: "timeout/abort/exit 全清理", en: "timeout, abort and exit clean up everything" },
    deduction: { zh: "悬挂 Promise", en: "hanging promises" },
    hint: { zh: "重读课程「统一 settle」一节（7.4）：所有完成路径（含写失败）走同一个 settle，删除 Map 记录、clearTimeout、removeEventListener；Map 删除是一次性提交点。在途数达到 maxPending 时以 MCP_BUSY 拒绝见 7.2 与 7.14；每个失败的测试下面写着它属于哪一个 TODO。", en: "Reread the settle section (7.4): every way a request ends, a failed write included, goes through one settle that deletes the entry, clears the timer and removes the listener; the deletion is the commit point. Refusing MCP_BUSY at maxPending calls in flight: sections 7.2 and 7.14. Each failing test below names the TODO it belongs to." },
  }),
  checkOf("rubric/process", "rubric", 8, LESSON_SECTIONS.close, {
    title: { zh: "进程", en: "Process" },
    standard: { zh: "shell:false 且 close 等待退出", en: "shell: false, and close waits for the exit" },
    deduction: { zh: "孤儿进程", en: "orphan processes" },
    hint: { zh: "重读课程「启动」与「关闭」两节：spawn(executable, args, { shell: false })，环境变量用 allowlist；close 先 SIGTERM，超时 SIGKILL，等 exit 后才 resolve，并发 close 共享一次关闭。", en: "Reread the spawn and close sections: spawn(executable, args, { shell: false }) with an env allowlist; close sends SIGTERM, then SIGKILL after closeTimeoutMs, resolves after exit, and concurrent closes share one shutdown." },
  }),
  checkOf("rubric/handshake", "rubric", 8, LESSON_SECTIONS.handshake, {
    title: { zh: "协议", en: "Protocol" },
    standard: { zh: "初始化后才发现/调用", en: "discover and call only after initialize" },
    deduction: { zh: "跳过握手", en: "skipping the handshake" },
    hint: { zh: "重读课程「握手」一节（7.8）：initialize 成功前 listTools/callTool 以 MCP_NOT_INITIALIZED 拒绝且不写任何东西；并发 initialize 共享一次握手；版本不支持时失败并停止子进程。不合法的行（协议故障）见 7.7，超长行（分帧，TODO(framing)）见 7.12，调用输入校验（MCP_INVALID_ARGUMENT）见 7.2。", en: "Reread the handshake section (7.8): before initialize succeeds, listTools/callTool reject MCP_NOT_INITIALIZED and write nothing; concurrent initialize calls share one handshake; an unsupported version fails and stops the child. Invalid lines (protocol faults): 7.7; an oversized line (framing, TODO(framing)): 7.12; checking call input (MCP_INVALID_ARGUMENT): 7.2." },
  }),
  leftoversCheck("probe/orphans", "probe", 8, LESSON_SECTIONS.close, {
    title: { zh: "孤儿进程探针", en: "Orphan probe" },
    standard: { zh: "close() resolve 后、评分结束后，没有任何服务器进程存活", en: "no server process alive after close() resolved, nor after grading" },
    deduction: { zh: "只 kill 不等待，或留下子进程", en: "killing without waiting, or leaving children behind" },
    hint: { zh: "重读课程「关闭」一节：close() 必须等子进程真正退出（exit 事件）才 resolve；不要自己另外启动进程。", en: "Reread the close section: close() resolves only after the child really exited (the exit event); do not start processes of your own." },
  }),
];

// ---- which check grades which rule of the client contract -------------------------------

/** One rule of CONTRACT.md §1 (copied verbatim in contract-1.md) and the tests that grade it. */
export interface ContractRule {
  /** A stable name for the rule. */
  id: string;
  /** Text of contract-1.md this rule stands for: a bullet's sentence, an error code or an option name. */
  quote: string;
  /** Check id and the title (or a title's fixed part) of each test that grades the rule. */
  tests: Array<{ check: string; test: string }>;
}

// Names for the tests the rules cite, grouped by the check they belong to.
function testsOf<K extends string>(check: string, titles: Record<K, string>): Record<K, { check: string; test: string }> {
  return Object.fromEntries(Object.entries<string>(titles).map(([name, test]) => [name, { check, test }])) as Record<K, { check: string; test: string }>;
}

/** The model-based probe's test title (probes/model.test.ts), the same in every dimension. */
const MODEL_TEST = "conforms to the contract model over seeded random sequences of operations";

const T = {
  ...testsOf("evidence/happy-path", { happy: "initializes, lists the echo tool, calls it, and close() leaves no process" }),
  ...testsOf("evidence/out-of-order", { outOfOrder: "matches a fast answer to the fast call while the slow call waits, then the slow one" }),
  ...testsOf("evidence/remote-error", { remoteError: "rejects a JSON-RPC error as MCP_ERROR with its code and data, and keeps working" }),
  ...testsOf("evidence/timeout", { timeout: "rejects with MCP_TIMEOUT, cleans up, and never hands the late answer to a newer call" }),
  ...testsOf("evidence/abort", { abort: "rejects a pre-aborted call without writing it, and an aborted call with its listener removed" }),
  ...testsOf("evidence/server-exit", { serverExit: "rejects every pending call with MCP_PROCESS_EXIT, exit code and stderr, and can start again" }),
  ...testsOf("rubric/handshake", {
    notInitialized: "rejects listTools and callTool before initialize with MCP_NOT_INITIALIZED and sends nothing",
    sharedInit: "sends one initialize for concurrent initialize() calls, and none once initialized",
    initializedAfter: "sends notifications/initialized only after the initialize answer",
    badVersion: "fails the handshake on an unsupported protocol version, sends no notifications/initialized and stops the child",
    faults: "rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on",
    // One of the generated fault tests: its scenario entry in probes/protocol.test.ts.
    oversized: '{ scenario: "oversized"',
    oversizedTitle: "rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on oversized",
    badInput: "refuses a call with bad input with MCP_INVALID_ARGUMENT and writes nothing",
    splitCharacter: "resolves a result exactly as sent when a multi-byte character is split between two reads",
    isErrorResult: "resolves a tool result with isError: true exactly as sent",
    lineCapBytes: "counts maxLineBytes in bytes: a line of multi-byte text over the cap in bytes is a protocol fault",
    lineCapDefault: "accepts answer lines up to the default maxLineBytes of 1 MiB and refuses longer ones",
    failedHandshakeStops: "stops the child after a handshake answered with a JSON-RPC error, and after one that timed out",
    initializeShape: "sends initialize with protocolVersion, capabilities and clientInfo, and refuses an answer without capabilities or serverInfo",
    noImplicitStart: "rejects calls after the server died with MCP_NOT_INITIALIZED and starts nothing until initialize()",
    errorDataBounded: "keeps McpError.data of a remote error size-bounded",
    oddAnswers: "resolves a result of null as sent, keeps an error's data of 0 and of null and its code 0, and settles nothing with an error whose id is null or unknown",
    idleFault: "stops the server on a line that is no JSON-RPC message while no call is pending",
  }),
  ...testsOf("rubric/id-matching", {
    burst: "concurrent calls to one tool, released in a seeded random order, each to its own caller",
    strayIds: 'settles nothing with a string id "N", an unknown id, a repeated answer or a notification',
    lateAnswer: "never hands a late answer, arriving after its call timed out, to a newer call",
    ids: "numbers requests with strictly increasing integer ids and never reuses one",
  }),
  ...testsOf("rubric/lifecycle", {
    cleanEndings: "leaves nothing pending, no timer and no abort listener after a timeout, an abort and a remote error",
    cleanExitClose: "leaves nothing pending, no timer and no abort listener after the server exits and after close()",
    cleanWriteFailure: "leaves nothing pending, no timer and no abort listener after a write fails",
    busy: "refuses a call with MCP_BUSY while maxPending requests are in flight",
    race: "settles a call exactly once when its timeout and its abort fire together, in either order",
    stress: "answers 100 calls with seeded random delays each to its caller, and leaves nothing behind",
    busyFreed: "frees the maxPending slot of every call that timed out",
    exitInHandshake: "rejects initialize() with MCP_PROCESS_EXIT when the server exits during the handshake",
    queuedTimeout: "times out a call queued behind a server that stopped reading its stdin",
    oldExit: "keeps the new server's state when the old one exits after a new initialize()",
    duringClose: "refuses every call made while close() runs with CLIENT_CLOSED and starts nothing",
    preAbortedEvery: "rejects listTools() and callTool() with an already aborted signal with MCP_ABORTED and writes nothing",
    closeRejectsFirst: "rejects pending calls with CLIENT_CLOSED as soon as close() is called, before the server is gone",
    drained: "lets the client's process exit on its own once every client is closed (observed from outside it)",
    listDeadline: "times out listTools() at the timeoutMs it is given",
    callDeadline: "gives a call the client's timeoutMs when it has none of its own, and its own when it has one",
    busyDefault: "takes 256 calls in flight by default (maxPending) and refuses the 257th with MCP_BUSY",
  }),
  ...testsOf("rubric/process", {
    noShell: "starts the server without a shell and passes odd arguments through verbatim",
    env: "passes the configured env and cwd but nothing else of the grader's environment to the server",
    closeWaits: "resolves close() only after the server is gone, and two concurrent close() calls share that shutdown",
    grandchild: "leaves no child of the server behind after close()",
    sigkill: "kills a server that ignores SIGTERM once closeTimeoutMs (2 s by default) has passed, not sooner",
    badOptions: "refuses bad options with MCP_INVALID_ARGUMENT in the constructor and starts nothing",
    spawnFailed: "rejects initialize() with MCP_SPAWN_FAILED for a missing or non-executable program, without crashing",
    closeAfterFault: "leaves no process, grandchildren included, once close() resolves after a protocol fault",
    closeAfterFailedHandshake: "leaves no process, grandchildren included, once close() resolves after a failed handshake",
    stderrDrained: "keeps reading the server's stderr after maxStderrBytes is reached",
    sigtermFirst: "sends SIGTERM before any SIGKILL in close()",
    exitSignal: "reports how the server ended in MCP_PROCESS_EXIT (the signal, or an exit code, 0 included), and has no pid once it exited",
  }),
  // The model-based probe: one test per rubric dimension, all of one title.
  ...testsOf("rubric/id-matching", { modelIds: MODEL_TEST }),
  ...testsOf("rubric/lifecycle", { modelLifecycle: MODEL_TEST }),
  ...testsOf("rubric/process", { modelProcess: MODEL_TEST }),
  ...testsOf("rubric/handshake", { modelHandshake: MODEL_TEST }),
  ...testsOf("homework/bounded-stderr", { stderrTail: "keeps a UTF-8 safe tail of at most maxStderrBytes" }),
  // The stress homework needs no code of its own: the pending map, under load.
  ...testsOf("homework/stress-100", { stress100: "matches 100 random-delay calls to their answers and leaves nothing pending" }),
};

/**
 * Every rule of CONTRACT.md §1 and the checks that grade it. tests/grader/contract.test.ts
 * fails when a sentence of §1's rules, an error code or an option of contract-1.md has no
 * rule here, when a rule names no test, or when a named test does not exist in its check.
 * (The bounded stderr tail is the one rule graded only by a bonus homework check.)
 */
export const CONTRACT_RULES: ContractRule[] = [
  // The behaviour bullets, one rule per sentence.
  { id: "handshake-sequence", quote: "and only then counts as initialized", tests: [T.happy, T.initializedAfter, T.initializeShape] },
  { id: "handshake-shared", quote: "Concurrent calls share one in-flight handshake", tests: [T.sharedInit] },
  { id: "handshake-failure", quote: "A failed handshake leaves `initialized` false and stops the child it started", tests: [T.badVersion, T.closeAfterFailedHandshake, T.failedHandshakeStops, T.exitInHandshake] },
  { id: "result-verbatim", quote: "`callTool` resolves with the JSON-RPC `result` exactly as the server sent it", tests: [T.happy, T.burst, T.splitCharacter, T.isErrorResult, T.oddAnswers] },
  { id: "ids-increasing", quote: "Requests carry client-made, strictly increasing integer ids", tests: [T.ids] },
  { id: "match-by-id", quote: "Responses are matched by id alone", tests: [T.outOfOrder, T.strayIds, T.lateAnswer, T.burst, T.timeout, T.oddAnswers] },
  { id: "notifications-settle-nothing", quote: "Server notifications (no id) never settle a request", tests: [T.strayIds] },
  { id: "settle-once", quote: "Each request settles exactly once", tests: [T.race, T.strayIds] },
  { id: "settle-cleanup", quote: "each delete the pending entry, clear its timer and remove its abort listener", tests: [T.cleanEndings, T.cleanExitClose, T.cleanWriteFailure, T.stress, T.abort, T.busyFreed, T.queuedTimeout, T.drained] },
  { id: "pre-aborted", quote: "A signal that is already aborted rejects with `MCP_ABORTED` and writes nothing", tests: [T.abort, T.preAbortedEvery] },
  { id: "exit-rejects", quote: "every pending request rejects with `MCP_PROCESS_EXIT`", tests: [T.serverExit, T.cleanExitClose] },
  { id: "no-replay", quote: "Pending requests are never replayed", tests: [T.serverExit] },
  { id: "restart", quote: "a later `initialize()` may start a fresh server", tests: [T.serverExit, T.noImplicitStart, T.oldExit] },
  { id: "protocol-fault", quote: "is a protocol fault: every", tests: [T.faults, T.idleFault] },
  { id: "oversized-refused", quote: "The oversized line is refused before it is held whole in memory", tests: [T.oversized] },
  { id: "close", quote: "`close()` is idempotent and concurrent-safe", tests: [T.closeWaits, T.sigkill, T.grandchild, T.cleanExitClose, T.closeAfterFault, T.happy, T.duringClose] },
  // The constructor.
  { id: "constructor-validates", quote: "validates options, spawns nothing", tests: [T.badOptions] },
  // The error codes.
  { id: "code-invalid-argument", quote: "MCP_INVALID_ARGUMENT", tests: [T.badOptions, T.badInput] },
  { id: "code-spawn-failed", quote: "MCP_SPAWN_FAILED", tests: [T.spawnFailed] },
  { id: "code-not-initialized", quote: "MCP_NOT_INITIALIZED", tests: [T.notInitialized, T.noImplicitStart] },
  { id: "code-protocol-error", quote: "MCP_PROTOCOL_ERROR", tests: [T.faults, T.badVersion] },
  { id: "code-error", quote: "MCP_ERROR", tests: [T.remoteError] },
  { id: "code-timeout", quote: "MCP_TIMEOUT", tests: [T.timeout, T.cleanEndings] },
  { id: "code-aborted", quote: "MCP_ABORTED", tests: [T.abort] },
  { id: "code-busy", quote: "MCP_BUSY", tests: [T.busy, T.busyFreed, T.busyDefault] },
  { id: "code-process-exit", quote: "MCP_PROCESS_EXIT", tests: [T.serverExit, T.exitInHandshake] },
  { id: "code-client-closed", quote: "CLIENT_CLOSED", tests: [T.cleanExitClose, T.duringClose] },
  // The options.
  { id: "option-executable", quote: "executable", tests: [T.noShell, T.spawnFailed] },
  { id: "option-args", quote: "args", tests: [T.noShell] },
  { id: "option-cwd", quote: "cwd", tests: [T.env] },
  { id: "option-env", quote: "env", tests: [T.env] },
  { id: "option-timeout", quote: "timeoutMs", tests: [T.badOptions, T.timeout, T.cleanEndings, T.listDeadline, T.callDeadline] },
  { id: "option-close-timeout", quote: "closeTimeoutMs", tests: [T.sigkill] },
  { id: "option-max-line", quote: "maxLineBytes", tests: [T.oversized, T.lineCapBytes, T.lineCapDefault] },
  { id: "option-max-stderr", quote: "maxStderrBytes", tests: [T.stderrTail, T.stderrDrained, T.badOptions] },
  { id: "option-max-pending", quote: "maxPending", tests: [T.busy, T.busyDefault] },
];

// ---- the starter's TODOs ----------------------------------------------------------------

// Failures that show close() not doing its job, whichever test they happen in: a process alive
// after close() resolved, a client timer left after close(), a close() that never settles.
// Both languages of labs/33-mcp-lite/tests/messages.ts.
const CLEAN_SHUTDOWN: string[] = [
  "close\\(\\) 已 resolve，但进程", "close\\(\\) resolved but process",
  "close\\(\\)后客户端还留着", "after close\\(\\), the client still holds",
  "^挂起：close\\(\\)", "^hung: close\\(\\)",
];

// Failures that show an abort listener left on a signal after its request ended, in whichever
// test: removing it on every ending is TODO(abort)'s work (tests/messages.ts, probes/messages.ts).
const LISTENER_LEFT: string[] = [
  "AbortSignal 上还(挂着|有) \\d+ 个 abort 监听器", "abort listener\\(s\\) (are still attached to|remain on) the AbortSignal",
];

// The starter's TODOs in the order the lesson teaches them (the index at the top of
// starter/src/mcp-client.ts lists the same), the checks that show each one done, and the
// graded tests each owns: every graded test belongs to exactly one TODO
// (tests/lesson/todo-map.test.ts holds this to the tests that exist).
const todos: TodoDef[] = [
  {
    tag: "实现 MCP pending request map",
    name: "pending-map",
    title: { zh: "递增 id + pending Map，按 id 匹配；写之前校验调用输入、限制在途数（MCP_BUSY）", en: "increasing ids and a pending map, answers matched by id; call input checked and in-flight calls capped (MCP_BUSY) before writing" },
    section: "7.1–7.4",
    lesson: `${LESSON}#pending-record`,
    checks: ["evidence/out-of-order", "rubric/id-matching", "rubric/lifecycle", "rubric/handshake", "homework/stress-100"],
    // (T.initializedAfter too: the starter's handshake already sends notifications/initialized
    // after the answer; what it lacks is an answer matched to its request. T.stress100: the
    // stress homework is this map under load, with no code of its own.)
    tests: [T.outOfOrder, T.burst, T.strayIds, T.lateAnswer, T.ids, T.stress, T.busy, T.badInput, T.cleanWriteFailure, T.busyFreed, T.isErrorResult, T.modelIds, T.busyDefault, T.initializedAfter, T.stress100],
  },
  { tag: "timeout", title: { zh: "每个请求自己的计时器", en: "a timer per request" }, section: "7.5", lesson: LESSON_SECTIONS.timeout, checks: ["evidence/timeout", "rubric/lifecycle"], tests: [T.timeout, T.queuedTimeout, T.listDeadline, T.callDeadline] },
  {
    tag: "abort",
    title: { zh: "AbortSignal：预先取消与运行中取消", en: "AbortSignal: before and during the call" },
    section: "7.6",
    lesson: LESSON_SECTIONS.abort,
    checks: ["evidence/abort", "rubric/lifecycle"],
    tests: [T.abort, T.race, T.cleanEndings, T.preAbortedEvery],
    blame: LISTENER_LEFT,
  },
  {
    tag: "remote-error",
    title: { zh: "JSON-RPC error → MCP_ERROR；不合法的行 → MCP_PROTOCOL_ERROR 并停止服务器", en: "JSON-RPC error → MCP_ERROR; an invalid line → MCP_PROTOCOL_ERROR and the server stopped" },
    section: "7.7",
    lesson: LESSON_SECTIONS.remoteError,
    checks: ["evidence/remote-error", "rubric/handshake"],
    tests: [T.remoteError, T.faults, T.errorDataBounded, T.oddAnswers, T.idleFault],
  },
  {
    tag: "handshake",
    title: { zh: "握手与协议版本协商", en: "handshake and protocol version negotiation" },
    section: "7.8",
    lesson: LESSON_SECTIONS.handshake,
    checks: ["evidence/happy-path", "rubric/handshake"],
    tests: [T.happy, T.notInitialized, T.sharedInit, T.badVersion, T.initializeShape, T.failedHandshakeStops, T.noImplicitStart, T.modelHandshake],
  },
  {
    tag: "exit",
    title: { zh: "进程退出拒绝全部 pending，错误带退出码与 stderr 尾部", en: "process exit rejects every pending call, with the exit code and the stderr tail" },
    section: "7.9",
    lesson: LESSON_SECTIONS.processExit,
    checks: ["evidence/server-exit", "rubric/lifecycle", "rubric/process"],
    tests: [T.serverExit, T.cleanExitClose, T.exitInHandshake, T.oldExit, T.stderrDrained, T.exitSignal, T.modelLifecycle],
  },
  {
    tag: "close",
    title: { zh: "close()：拒绝 pending、SIGTERM → SIGKILL、等待退出", en: "close(): reject pending, SIGTERM → SIGKILL, wait for exit" },
    section: "7.10",
    lesson: LESSON_SECTIONS.close,
    checks: ["rubric/process", "probe/orphans", "rubric/lifecycle"],
    tests: [T.closeWaits, T.grandchild, T.sigkill, T.sigtermFirst, T.closeRejectsFirst, T.closeAfterFault, T.closeAfterFailedHandshake, T.duringClose, T.drained, T.modelProcess],
    blame: CLEAN_SHUTDOWN,
  },
  {
    tag: "process",
    title: { zh: "不经 shell、环境白名单、启动失败 MCP_SPAWN_FAILED", en: "no shell, env allowlist, MCP_SPAWN_FAILED when the program cannot start" },
    section: "7.11",
    lesson: LESSON_SECTIONS.spawn,
    checks: ["rubric/process"],
    tests: [T.noShell, T.env, T.badOptions, T.spawnFailed],
  },
  {
    tag: "framing",
    title: { zh: "按字节分行与行长上限（rubric/handshake 的 oversized 一项）", en: "byte-level framing with a line cap (rubric/handshake's oversized case)" },
    section: "7.12",
    lesson: `${LESSON}#framing`,
    checks: ["rubric/handshake"],
    tests: [T.oversizedTitle, T.splitCharacter, T.lineCapBytes, T.lineCapDefault],
  },
  { tag: "stderr", title: { zh: "有界 stderr（作业）", en: "bounded stderr (homework)" }, section: "7.13", lesson: `${LESSON}#stderr`, checks: ["homework/bounded-stderr"] },
  { tag: "notifications", title: { zh: "服务器通知（作业）", en: "server notifications (homework)" }, section: "10", lesson: `${LESSON}#homework`, checks: ["homework/notifications"] },
  { tag: "cancel-notice", title: { zh: "取消通知（作业）", en: "cancellation notice (homework)" }, section: "10", lesson: `${LESSON}#homework`, checks: ["homework/cancel-notice"] },
  {
    tag: "version-negotiation",
    title: { zh: "协议版本协商加强版：错误写明双方版本，接受双方都支持的较旧版本（作业）", en: "version negotiation, the stronger form: both sides' versions in the error, an older version both support accepted (homework)" },
    section: "10",
    lesson: `${LESSON}#homework`,
    checks: ["homework/version-negotiation"],
  },
];

export const lab: LabManifest = defineLab({
  id: "33-mcp-lite",
  title: { zh: "第 33 课：MCP-lite JSON-RPC 客户端", en: "Lab 33: MCP-lite JSON-RPC client" },
  entry: "src/mcp-client.ts",
  requiredExports: ["McpClient", "McpError"],
  // The model-based probe is one of the longest files and one of the smallest: by size,
  // vitest would start it last, where it runs alone. probes/process.test.ts waits out a
  // default close() grace of 2 s: started early, other files run while it waits.
  runFirst: ["probes/model.test.ts", "probes/process.test.ts"],
  probeFiles: [
    "probes/id-matching.test.ts",
    "probes/lifecycle.test.ts",
    "probes/lifecycle-stress.test.ts",
    "probes/process.test.ts",
    "probes/handshake.test.ts",
    "probes/protocol.test.ts",
    "probes/process-faults.test.ts",
    "probes/handshake-edges.test.ts",
    "probes/lifecycle-edges.test.ts",
    "probes/process-edges.test.ts",
    "probes/model.test.ts",
  ],
  homeworkWeight: 2,
  testTitles: { zh: TEST_TITLES_ZH },
  homeworkTitles: {
    "homework/bounded-stderr": { zh: "有界 stderr：按字节保留 UTF-8 安全的尾部", en: "Bounded stderr: a UTF-8 safe tail, capped in bytes" },
    "homework/cancel-notice": { zh: "取消通知：超时或 abort 后发 notifications/cancelled", en: "Cancellation notice: notifications/cancelled after a timeout or an abort" },
    "homework/notifications": { zh: "服务器通知：交给 onNotification，不 settle 任何请求", en: "Server notifications: handed to onNotification, settling nothing" },
    "homework/stress-100": { zh: "压力测试：100 个随机延迟的调用各得其果", en: "Stress: 100 random-delay calls, each to its own caller" },
    "homework/version-negotiation": { zh: "协议版本协商（加强版：写明双方版本、接受较旧版本）", en: "Protocol version negotiation, the stronger form (both sides' versions named, an older version accepted)" },
  },
  checks,
  todos,
  starterPasses: ["evidence/happy-path"],
});

export default lab;
