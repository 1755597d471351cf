// crash: three calls are pending when the server dies (the `exit` tool writes to stderr and
// exits with code 7 without answering). What does each caller get?

import { McpClient, type McpError } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { DEMO_SELF_DESTRUCT_MS, heading, tell, waitUntil, type DemoCase } from "../demo.ts";
import { RaceTimeoutClient, NAIVE_DEFAULT_TIMEOUT_MS } from "../naive-clients.ts";
import { Timeline, type Settlement } from "../timeline.ts";

const EXIT_CODE = 7;
const STDERR = "fatal: disk on fire\n";

const CALLS: Array<[label: string, tool: string, args: Record<string, unknown>]> = [
  ["never", "never", {}],
  ["held", "echo", { value: "held", after: "nothing-will-answer-this" }],
  ["exit", "exit", { code: EXIT_CODE, stderr: STDERR }],
];

const handshakeDone = (log: () => Array<{ msg: any }>) => () => log().some((e) => e.msg?.method === "notifications/initialized");

export const crash: DemoCase = {
  id: "crash",
  title: { zh: "服务端崩溃时的 pending 请求", en: "pending requests when the server crashes" },
  shows: { zh: "服务端带着 3 个未完成请求退出（exit code 7，stderr 留下原因）：反模式客户端全部挂起，参考实现全部以 MCP_PROCESS_EXIT reject，并带上退出码和 stderr 尾部。", en: "The server exits (code 7, reason on stderr) with 3 requests pending: the anti-pattern client leaves all of them hanging; the reference McpClient rejects every one with MCP_PROCESS_EXIT, the exit code and the stderr tail." },
  async run(ctx, stage) {
    // ① the naive client: matches by id, but never listens for the exit.
    heading(ctx, { zh: "① 反模式 RaceTimeoutClient：没有 exit 处理", en: "① anti-pattern RaceTimeoutClient: no exit handling" });
    const naiveWs = stage.workspace();
    const naive = new RaceTimeoutClient(naiveWs.command({ selfDestructMs: DEMO_SELF_DESTRUCT_MS }));
    await naive.initialize();
    await waitUntil(handshakeDone(naiveWs.log), 2_000);
    const naiveTimeline = new Timeline(ctx.lang, naiveWs.log);
    void naive.exited.then((info) =>
      naiveTimeline.note({ zh: "☠ 服务端进程退出：exit code {code}（客户端没有监听，什么也没做）", en: "☠ the server process exited: code {code} (the client does not listen, so nothing happens)" }, { code: info.exitCode }),
    );
    const naiveTracked = CALLS.map(([label, tool, args]) => naiveTimeline.track(label, naive.callTool(tool, args), () => "bad"));
    await naiveTimeline.waitAll(ctx.deadlineMs, () => "bad");
    for (const line of naiveTimeline.render()) ctx.out(line);
    const naivePending = naive.pendingCount;
    tell(ctx, {
      zh: "  → 3 个 Promise 都没有结束，pending 仍有 {pending} 项；服务端的 stderr 被直接丢弃。它们要等到各自 {ms} ms 的默认超时才会以“超时”失败——把崩溃误报成超时。",
      en: "  → none of the 3 promises settled; {pending} entries are still pending; the server's stderr was thrown away. They would only fail at their {ms} ms default timeout, reporting a crash as a timeout.",
    }, { pending: naivePending, ms: NAIVE_DEFAULT_TIMEOUT_MS });
    naive.dispose();

    // ② the reference client.
    heading(ctx, { zh: "② 参考实现 McpClient：exit 让所有 pending 统一 reject", en: "② reference McpClient: the exit rejects everything pending" });
    const ws = stage.workspace();
    const client = new McpClient({ ...ws.command({ selfDestructMs: DEMO_SELF_DESTRUCT_MS }), timeoutMs: 10_000 });
    await client.initialize();
    const firstPid = client.pid;
    await waitUntil(handshakeDone(ws.log), 2_000);
    const timeline = new Timeline(ctx.lang, ws.log);
    const isExit = (outcome: Settlement) =>
      outcome.status === "rejected" && (outcome.reason as McpError)?.code === "MCP_PROCESS_EXIT" ? "good" : "bad";
    const tracked = CALLS.map(([label, tool, args]) => timeline.track(label, client.callTool(tool, args), isExit));
    await timeline.waitAll(ctx.deadlineMs, () => "bad");
    for (const line of timeline.render()) ctx.out(line);
    const errors = tracked.map((t) => (t.outcome?.status === "rejected" ? (t.outcome.reason as McpError) : undefined));
    const sample = errors.find((e) => e?.exitCode === EXIT_CODE);
    tell(ctx, { zh: "  错误对象上：code={code} exitCode={exit} signal={signal} stderr={stderr}", en: "  On the error object: code={code} exitCode={exit} signal={signal} stderr={stderr}" }, {
      code: sample?.code, exit: sample?.exitCode, signal: sample?.signal ?? null, stderr: JSON.stringify(sample?.stderr ?? ""),
    });
    const afterExit = { initialized: client.initialized, pendingCount: client.pendingCount };
    tell(ctx, { zh: "  退出之后：initialized={init}，pendingCount={pending}。", en: "  After the exit: initialized={init}, pendingCount={pending}." }, {
      init: afterExit.initialized, pending: afterExit.pendingCount,
    });
    await client.initialize();
    const again = await client.callTool("echo", { value: "again" });
    const secondPid = client.pid;
    tell(ctx, {
      zh: "  再次 initialize() 启动了新进程（pid {a} → {b}），echo 返回 {value}；旧请求不会被重放。",
      en: "  initialize() again started a fresh server (pid {a} → {b}); echo answered {value}; the old requests are never replayed.",
    }, { a: firstPid, b: secondPid, value: JSON.stringify(again) });
    await client.close();

    const ok =
      naiveTracked.every((t) => t.outcome?.status === "hung") &&
      naivePending === CALLS.length &&
      errors.every((e) => e?.code === "MCP_PROCESS_EXIT") &&
      sample !== undefined &&
      String(sample.stderr ?? "").includes("disk on fire") &&
      !afterExit.initialized &&
      afterExit.pendingCount === 0 &&
      secondPid !== undefined &&
      secondPid !== firstPid &&
      (again as { content?: unknown })?.content === "again";
    return {
      ok,
      facts: {
        naive: naiveTracked.map((t) => ({ label: t.label, outcome: t.outcome?.status })),
        naivePending,
        safe: errors.map((e) => ({ code: e?.code, exitCode: e?.exitCode, stderr: e?.stderr })),
        afterExit,
        restarted: secondPid !== firstPid,
      },
    };
  },
};
