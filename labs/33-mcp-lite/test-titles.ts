// Lab 33's test titles in Simplified Chinese, for the grade report (the manifest's testTitles.zh).
// Keys are the English titles exactly as the tests write them (tests/evidence, probes, homework).
// Every key is a whole title (the report also takes a key that is only the fixed start of a
// family of titles, the rest following the translation as it is, but this lab has none: each
// protocol fault's title is listed whole). The model probe's title is the same in every rubric
// check, so it has one key.

/** Simplified Chinese titles of lab 33's tests, by English title. A key is a whole title, or the fixed start of titles that go on with a variable part (which the report keeps as it is). */
export const TEST_TITLES_ZH: Readonly<Record<string, string>> = {
  // ---- evidence -------------------------------------------------------------------------
  "initializes, lists the echo tool, calls it, and close() leaves no process": "完成初始化、列出 echo 工具并调用它，close() 后不留任何进程",
  "matches a fast answer to the fast call while the slow call waits, then the slow one": "慢调用仍在等待时，快响应先交给快调用，随后慢响应交给慢调用",
  "rejects a JSON-RPC error as MCP_ERROR with its code and data, and keeps working": "JSON-RPC error 以 MCP_ERROR reject 并保留其 code 与 data，客户端继续可用",
  "rejects with MCP_TIMEOUT, cleans up, and never hands the late answer to a newer call": "以 MCP_TIMEOUT reject 并完成清理，迟到的响应绝不交给更新的调用",
  "rejects a pre-aborted call without writing it, and an aborted call with its listener removed": "预先 abort 的调用直接 reject、不写出请求；运行中被 abort 的调用 reject 并移除其监听器",
  "rejects every pending call with MCP_PROCESS_EXIT, exit code and stderr, and can start again": "以带 exit code 与 stderr 的 MCP_PROCESS_EXIT reject 全部在途调用，之后可重新启动",

  // ---- rubric/id-matching ---------------------------------------------------------------
  "answers 16 concurrent calls to one tool, released in a seeded random order, each to its own caller": "同一工具的 16 个并发调用按种子随机顺序放行，每个响应都交给各自的调用方",
  'settles nothing with a string id "N", an unknown id, a repeated answer or a notification': '字符串 id "N"、未知 id、重复响应或通知都不会 settle 任何调用',
  "never hands a late answer, arriving after its call timed out, to a newer call": "调用超时后才到达的迟到响应，绝不交给更新的调用",
  "numbers requests with strictly increasing integer ids and never reuses one": "请求 id 为严格递增的整数，且从不复用",

  // ---- the model probe (every rubric check) ---------------------------------------------
  "conforms to the contract model over seeded random sequences of operations": "在按种子随机生成的操作序列上符合契约模型",

  // ---- rubric/lifecycle -----------------------------------------------------------------
  "frees the maxPending slot of every call that timed out": "每个超时的调用都会释放其占用的 maxPending 名额",
  "times out a call queued behind a server that stopped reading its stdin": "服务器不再读取 stdin 时，排队等待写出的调用仍会超时",
  "keeps the new server's state when the old one exits after a new initialize()": "新的 initialize() 之后旧服务器才退出时，不影响新服务器的状态",
  "rejects pending calls with CLIENT_CLOSED as soon as close() is called, before the server is gone": "调用 close() 后立即以 CLIENT_CLOSED reject 在途调用，不等服务器退出",
  "refuses every call made while close() runs with CLIENT_CLOSED and starts nothing": "close() 进行期间发起的调用一律以 CLIENT_CLOSED 拒绝，且不启动任何进程",
  "times out listTools() at the timeoutMs it is given": "listTools() 按传入的 timeoutMs 超时",
  "gives a call the client's timeoutMs when it has none of its own, and its own when it has one": "调用没给 timeoutMs 时用客户端的 timeoutMs，给了就用它自己的",
  "takes 256 calls in flight by default (maxPending) and refuses the 257th with MCP_BUSY": "默认允许 256 个在途调用（maxPending），第 257 个以 MCP_BUSY 拒绝",
  "rejects initialize() with MCP_PROCESS_EXIT when the server exits during the handshake": "握手期间服务器退出时，initialize() 以 MCP_PROCESS_EXIT reject",
  "rejects listTools() and callTool() with an already aborted signal with MCP_ABORTED and writes nothing": "传入已 abort 的 signal 时，listTools() 与 callTool() 以 MCP_ABORTED reject，且不写出任何内容",
  "settles a call exactly once when its timeout and its abort fire together, in either order": "超时与 abort 同时触发时，无论先后，调用都只 settle 一次",
  "answers 100 calls with seeded random delays each to its caller, and leaves nothing behind": "100 个带种子随机延迟的调用各自拿到自己的响应，且不留任何残余",
  "leaves nothing pending, no timer and no abort listener after a timeout, an abort and a remote error": "超时、abort 与远端错误之后，不留在途请求、计时器和 abort 监听器",
  "leaves nothing pending, no timer and no abort listener after the server exits and after close()": "服务器退出后及 close() 之后，不留在途请求、计时器和 abort 监听器",
  "refuses a call with MCP_BUSY while maxPending requests are in flight": "在途请求达到 maxPending 时，以 MCP_BUSY 拒绝新调用",
  "leaves nothing pending, no timer and no abort listener after a write fails": "写入失败后，不留在途请求、计时器和 abort 监听器",
  "lets the client's process exit on its own once every client is closed (observed from outside it)": "所有客户端都 close() 后，客户端所在进程能自行退出（从进程外观察）",

  // ---- rubric/process -------------------------------------------------------------------
  "keeps reading the server's stderr after maxStderrBytes is reached": "达到 maxStderrBytes 后仍继续读取服务器的 stderr",
  "sends SIGTERM before any SIGKILL in close()": "close() 先发 SIGTERM，之后才可能发 SIGKILL",
  "reports how the server ended in MCP_PROCESS_EXIT (the signal, or an exit code, 0 included), and has no pid once it exited": "MCP_PROCESS_EXIT 报告服务器如何结束（信号，或退出码，包括 0），服务器退出后不再有 pid",
  "refuses bad options with MCP_INVALID_ARGUMENT in the constructor and starts nothing": "构造函数以 MCP_INVALID_ARGUMENT 拒绝非法选项，且不启动任何进程",
  "rejects initialize() with MCP_SPAWN_FAILED for a missing or non-executable program, without crashing": "程序不存在或不可执行时，initialize() 以 MCP_SPAWN_FAILED reject，且不崩溃",
  "leaves no process, grandchildren included, once close() resolves after a protocol fault": "协议故障后 close() resolve 时，不留任何进程（包括孙进程）",
  "leaves no process, grandchildren included, once close() resolves after a failed handshake": "握手失败后 close() resolve 时，不留任何进程（包括孙进程）",
  "starts the server without a shell and passes odd arguments through verbatim": "不经 shell 启动服务器，特殊参数原样传递",
  "passes the configured env and cwd but nothing else of the grader's environment to the server": "只把配置的 env 与 cwd 传给服务器，评分进程环境中的其他内容一概不传",
  "resolves close() only after the server is gone, and two concurrent close() calls share that shutdown": "服务器退出后 close() 才 resolve，两个并发的 close() 共享同一次关闭",
  "leaves no child of the server behind after close()": "close() 后不留下服务器的任何子进程",
  "kills a server that ignores SIGTERM once closeTimeoutMs (2 s by default) has passed, not sooner": "服务器忽略 SIGTERM 时，过了 closeTimeoutMs（默认 2 秒）才将其强制结束，不提前",

  // ---- rubric/handshake -----------------------------------------------------------------
  "resolves a result exactly as sent when a multi-byte character is split between two reads": "多字节字符被拆分在两次读取之间时，结果仍按原样 resolve",
  "resolves a tool result with isError: true exactly as sent": "带 isError: true 的工具结果按原样 resolve",
  "counts maxLineBytes in bytes: a line of multi-byte text over the cap in bytes is a protocol fault": "maxLineBytes 按字节计：多字节文本的行按字节数超过上限即为协议故障",
  "accepts answer lines up to the default maxLineBytes of 1 MiB and refuses longer ones": "接受不超过默认 maxLineBytes（1 MiB）的响应行，拒绝更长的行",
  "sends initialize with protocolVersion, capabilities and clientInfo, and refuses an answer without capabilities or serverInfo": "发送的 initialize 带 protocolVersion、capabilities 与 clientInfo，并拒绝缺少 capabilities 或 serverInfo 的响应",
  "stops the child after a handshake answered with a JSON-RPC error, and after one that timed out": "握手收到 JSON-RPC error 或超时后，都会停止子进程",
  "rejects calls after the server died with MCP_NOT_INITIALIZED and starts nothing until initialize()": "服务器意外退出后，调用以 MCP_NOT_INITIALIZED reject，再次 initialize() 之前不启动任何进程",
  "keeps McpError.data of a remote error size-bounded": "远端错误的 McpError.data 大小有上限",
  "rejects listTools and callTool before initialize with MCP_NOT_INITIALIZED and sends nothing": "initialize 之前调用 listTools 与 callTool 以 MCP_NOT_INITIALIZED reject，且不发送任何内容",
  "sends one initialize for concurrent initialize() calls, and none once initialized": "并发的 initialize() 只发送一次 initialize，已初始化后不再发送",
  "sends notifications/initialized only after the initialize answer": "收到 initialize 响应之后才发送 notifications/initialized",
  "fails the handshake on an unsupported protocol version, sends no notifications/initialized and stops the child": "协议版本不受支持时握手失败，不发送 notifications/initialized，并停止子进程",
  // The protocol faults (probes/protocol.test.ts, PROTOCOL_FAULTS: "... stops the server on ${scenario}: ${fault}"),
  // each title whole, so that the Chinese label names the fault in Chinese too.
  "rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on non-object: the line [1,2,3]": "服务器发来一行 [1,2,3]（不是 JSON 对象）时，以 MCP_PROTOCOL_ERROR reject 在途调用并停止服务器",
  'rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on bad-jsonrpc: "jsonrpc": "1.0"': '服务器发来 "jsonrpc": "1.0" 的响应时，以 MCP_PROTOCOL_ERROR reject 在途调用并停止服务器',
  "rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on result-and-error: a response with both result and error": "服务器发来同时带有 result 与 error 的响应时，以 MCP_PROTOCOL_ERROR reject 在途调用并停止服务器",
  "rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on neither: a response with neither result nor error": "服务器发来既没有 result 也没有 error 的响应时，以 MCP_PROTOCOL_ERROR reject 在途调用并停止服务器",
  "rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on oversized: a line over maxLineBytes (65536 bytes) that never ends": "服务器发来超过 maxLineBytes（65536 字节）且永不结束的一行时，以 MCP_PROTOCOL_ERROR reject 在途调用并停止服务器",
  "rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on half-line-exit: half a line, then the server exits": "服务器写出半行数据随后退出时，reject 在途调用（MCP_PROTOCOL_ERROR 或 MCP_PROCESS_EXIT）并停止服务器",
  'rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on stdout-pollution: a stray line "ready" on stdout': '服务器在 stdout 上多写了一行 "ready" 时，以 MCP_PROTOCOL_ERROR reject 在途调用并停止服务器',
  "rejects pending calls with MCP_PROTOCOL_ERROR and stops the server on lines that are no JSON-RPC 2.0 message: null, a batch, a bad or missing jsonrpc, a bad error": "收到不是 JSON-RPC 2.0 消息的行（null、批量消息、jsonrpc 错误或缺失、不合法的 error）时，以 MCP_PROTOCOL_ERROR reject 在途调用并停止服务器",
  "resolves a result of null as sent, keeps an error's data of 0 and of null and its code 0, and settles nothing with an error whose id is null or unknown": "result 为 null 时按原样 resolve，保留 error 中为 0 或 null 的 data 以及为 0 的 code，id 为 null 或未知的 error 不 settle 任何调用",
  "stops the server on a line that is no JSON-RPC message while no call is pending": "没有调用在途时，服务器写出不是 JSON-RPC 消息的一行，同样停止服务器",
  "refuses a call with bad input with MCP_INVALID_ARGUMENT and writes nothing": "输入不合法的调用以 MCP_INVALID_ARGUMENT 拒绝，且不写出任何内容",

  // ---- homework -------------------------------------------------------------------------
  "keeps a UTF-8 safe tail of at most maxStderrBytes, marks it truncated, and attaches it to MCP_PROCESS_EXIT": "保留不超过 maxStderrBytes、UTF-8 安全的 stderr 尾部，标记 truncated，并附在 MCP_PROCESS_EXIT 上",
  "keeps the last 64 KiB of stderr when maxStderrBytes is not set": "未设置 maxStderrBytes 时保留 stderr 的最后 64 KiB",
  "sends notifications/cancelled {requestId, reason} after a timeout and after an abort": "超时和 abort 之后都发送 notifications/cancelled {requestId, reason}",
  "passes progress and log notifications to onNotification without letting them settle a call": "把进度与日志通知交给 onNotification，且不让它们 settle 任何调用",
  "matches 100 random-delay calls to their answers and leaves nothing pending": "100 个随机延迟的调用各自匹配到自己的响应，且不留在途请求",
  "refuses an unsupported version, names both sides, and stops the child": "拒绝不支持的版本，错误信息写明双方的版本，并停止子进程",
  "accepts an older version both sides support": "接受双方都支持的较旧版本",
};
