// leak: 100 calls the server never answers, each with a 50 ms deadline and the same
// long-lived AbortSignal (as an agent session would pass). Every call times out; what
// differs is what each client leaves behind.

import { getEventListeners } from "node:events";
import type { FixtureCommand } from "../../../fixtures/index.ts";
import { McpClient } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { DEMO_SELF_DESTRUCT_MS, heading, tell, waitUntil, type DemoCase, type DemoContext, type Stage } from "../demo.ts";
import type { Text } from "../i18n.ts";
import { NAIVE_DEFAULT_TIMEOUT_MS, RaceTimeoutClient } from "../naive-clients.ts";
import { installTimerCounter } from "../timers.ts";

const CALLS = 100;
// At most 10 calls in flight at once: more listeners than that on one signal makes Node warn
// even for a correct client, and the warning should point at the leak only.
const BATCH = 10;
const PRINT_EVERY = 20;
const TIMEOUT_MS = 50;

interface Sample {
  calls: number;
  pending: number;
  timers: number;
  listeners: number;
}

interface RoundResult {
  samples: Sample[];
  /** How many of the calls rejected, and with which codes. */
  codes: Record<string, number>;
  cancellationsSent: number;
  callsReceived: number;
  /** MaxListenersExceededWarning events Node emitted during the round. */
  listenerWarnings: number;
}

/** A client as a round drives it: started on the fixture, given doomed calls, then stopped; and what to say after. */
interface Contender<C extends { pendingCount: number; initialize(): Promise<unknown> }> {
  title: Text;
  start(command: FixtureCommand): C;
  call(client: C, signal: AbortSignal): Promise<unknown>;
  stop(client: C): Promise<void> | void;
  lesson: Text;
}

const NAIVE: Contender<RaceTimeoutClient> = {
  title: { zh: "① 反模式 RaceTimeoutClient：用 Promise.race 做超时，只 reject 调用方的 Promise", en: "① anti-pattern RaceTimeoutClient: the deadline is a Promise.race that only rejects the caller's promise" },
  start: (command) => new RaceTimeoutClient(command),
  call: (client, signal) => client.callWithDeadline("never", {}, { timeoutMs: TIMEOUT_MS, signal }),
  stop: (client) => client.dispose(),
  lesson: {
    zh: "  → 调用方看到了超时，但 Map 里的记录没删、每个请求 {ms} ms 的默认计时器没清、监听器没移除。迟到的应答还会找到这些旧记录。（演示收尾时由演示代码清掉这些计时器，不是客户端做的。）",
    en: "  → the caller saw a timeout, but the map entry stays, each request's {ms} ms default timer stays armed, and the listener stays attached. A late answer would still find the stale entry. (The demo's teardown clears those timers; the client never does.)",
  },
};

const SAFE: Contender<McpClient> = {
  title: { zh: "② 参考实现 McpClient：超时走唯一的 settle，删除记录、清计时器、移除监听器", en: "② reference McpClient: the timeout goes through the one settle path: delete the entry, clear the timer, remove the listener" },
  start: (command) => new McpClient({ ...command, timeoutMs: 10_000 }),
  call: (client, signal) => client.callTool("never", {}, { timeoutMs: TIMEOUT_MS, signal }),
  stop: (client) => client.close(),
  lesson: { zh: "  → 每次超时都在 settle 里一次性归还全部资源，并尽力通知服务端放弃该请求。", en: "  → every timeout returns all of its resources in settle, and tells the server (best effort) to drop the request." },
};

async function round<C extends { pendingCount: number; initialize(): Promise<unknown> }>(ctx: DemoContext, stage: Stage, contender: Contender<C>): Promise<RoundResult> {
  heading(ctx, contender.title);
  const ws = stage.workspace();
  const client = contender.start(ws.command({ selfDestructMs: DEMO_SELF_DESTRUCT_MS }));
  await client.initialize();
  const session = new AbortController(); // never aborted: a long-lived signal shared by every call
  let listenerWarnings = 0;
  const onWarning = (warning: Error) => {
    if (warning.name === "MaxListenersExceededWarning") listenerWarnings += 1;
  };
  process.on("warning", onWarning);
  const counter = installTimerCounter();
  const samples: Sample[] = [];
  const codes: Record<string, number> = {};
  tell(ctx, { zh: "  已完成调用   pending 记录   活动计时器   abort 监听器", en: "  calls done   pending entries   live timers   abort listeners" });
  try {
    for (let done = 0; done < CALLS; done += BATCH) {
      const batch = Array.from({ length: BATCH }, () => contender.call(client, session.signal));
      const outcomes = await Promise.allSettled(batch);
      for (const outcome of outcomes) {
        const code = outcome.status === "rejected" ? String((outcome.reason as { code?: string })?.code ?? "Error") : "resolved";
        codes[code] = (codes[code] ?? 0) + 1;
      }
      const sample = {
        calls: done + BATCH,
        pending: client.pendingCount,
        timers: counter.live(),
        listeners: getEventListeners(session.signal, "abort").length,
      };
      samples.push(sample);
      if (sample.calls % PRINT_EVERY === 0) ctx.out(`  ${String(sample.calls).padStart(8)}   ${String(sample.pending).padStart(12)}   ${String(sample.timers).padStart(10)}   ${String(sample.listeners).padStart(12)}`);
    }
  } finally {
    counter.uninstall();
  }
  await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  process.off("warning", onWarning);
  if (listenerWarnings > 0) {
    tell(ctx, {
      zh: "  Node 发出了 MaxListenersExceededWarning：同一个 AbortSignal 上的监听器越积越多（警告原文见 stderr）。",
      en: "  Node emitted MaxListenersExceededWarning: listeners keep piling up on the same AbortSignal (the warning itself is on stderr).",
    });
  }
  // The solution sends a cancellation notice per timeout; give the server's log a moment to show them.
  await waitUntil(() => ws.log().filter((e) => e.msg?.method === "notifications/cancelled").length >= CALLS, 300);
  const log = ws.log();
  const callsReceived = log.filter((e) => e.dir === "in" && e.msg?.method === "tools/call").length;
  const cancellationsSent = log.filter((e) => e.dir === "in" && e.msg?.method === "notifications/cancelled").length;
  tell(ctx, {
    zh: "  管道上：服务端收到 {calls} 个 tools/call，回答 0 个（never 工具）；收到 notifications/cancelled {cancels} 个。Promise：{codes}。",
    en: "  On the pipe: the server received {calls} tools/call and answered none (the never tool); it received {cancels} notifications/cancelled. Promises: {codes}.",
  }, { calls: callsReceived, cancels: cancellationsSent, codes: JSON.stringify(codes) });
  await contender.stop(client);
  tell(ctx, contender.lesson, { ms: NAIVE_DEFAULT_TIMEOUT_MS });
  return { samples, codes, cancellationsSent, callsReceived, listenerWarnings };
}

export const leak: DemoCase = {
  id: "leak",
  title: { zh: "超时之后：谁在泄漏", en: "after the timeout: what leaks" },
  shows: { zh: "100 个超时调用之后，数一数 pending 记录、活动计时器和 abort 监听器：反模式客户端一路上涨，参考实现始终为 0。", en: "After 100 timed-out calls, count pending entries, live timers and abort listeners: they climb in the anti-pattern client and stay at zero in the reference McpClient." },
  async run(ctx, stage) {
    const naiveRound = await round(ctx, stage, NAIVE);
    const safeRound = await round(ctx, stage, SAFE);

    const last = (r: RoundResult) => r.samples[r.samples.length - 1]!;
    const climbed = (r: RoundResult) => r.samples.every((s, i) => s.pending === (i + 1) * BATCH && s.timers >= (i + 1) * BATCH && s.listeners === (i + 1) * BATCH);
    const ok =
      climbed(naiveRound) &&
      safeRound.samples.every((s) => s.pending === 0 && s.timers === 0 && s.listeners === 0) &&
      safeRound.codes.MCP_TIMEOUT === CALLS &&
      safeRound.listenerWarnings === 0 &&
      naiveRound.codes.TIMEOUT === CALLS;
    return { ok, facts: { naive: naiveRound, safe: safeRound, naiveFinal: last(naiveRound), safeFinal: last(safeRound) } };
  },
};
