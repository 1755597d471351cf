// orphan: does the server process outlive close()? Two servers that make it hard: one that
// ignores SIGTERM, and one that leaves a grandchild behind in its process group.

import { isAlive } from "../../../fixtures/index.ts";
import { McpClient } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { DEMO_SELF_DESTRUCT_MS, heading, sleep, waitUntil, type DemoCase, type DemoContext, type Stage } from "../demo.ts";
import { say, type Text } from "../i18n.ts";
import { SlotClient } from "../naive-clients.ts";

/** Grace the reference client gives SIGTERM before SIGKILL in this demo. */
const CLOSE_TIMEOUT_MS = 500;
/** How long the demo keeps looking at a pid the naive close left behind. */
const OBSERVE_MS = 1_000;

interface Round {
  pids: number[];
  aliveWhenCloseReturned: number[];
  aliveLater: number[];
  closeMs: number;
}

async function naiveRound(ctx: DemoContext, stage: Stage, scenario: "ignore-sigterm" | "grandchild", title: Text): Promise<Round> {
  heading(ctx, title);
  const ws = stage.workspace();
  const client = new SlotClient(ws.command({ scenarios: [scenario], selfDestructMs: DEMO_SELF_DESTRUCT_MS }));
  await client.initialize();
  if (scenario === "grandchild") await waitUntil(() => ws.pids().length >= 2, 2_000);
  const pids = ws.pids();
  const started = Date.now();
  await client.close();
  const closeMs = Date.now() - started;
  const aliveWhenCloseReturned = pids.filter(isAlive);
  // Give the processes every chance to go away on their own, then look again.
  if (scenario === "grandchild") await waitUntil(() => !isAlive(pids[0]!), OBSERVE_MS);
  else await sleep(OBSERVE_MS);
  const aliveLater = pids.filter(isAlive);
  client.dispose();
  report(ctx, { pids, aliveWhenCloseReturned, aliveLater, closeMs });
  return { pids, aliveWhenCloseReturned, aliveLater, closeMs };
}

async function safeRound(ctx: DemoContext, stage: Stage, scenario: "ignore-sigterm" | "grandchild", title: Text): Promise<Round> {
  heading(ctx, title, { ms: CLOSE_TIMEOUT_MS });
  const ws = stage.workspace();
  const client = new McpClient({ ...ws.command({ scenarios: [scenario], selfDestructMs: DEMO_SELF_DESTRUCT_MS }), closeTimeoutMs: CLOSE_TIMEOUT_MS });
  await client.initialize();
  if (scenario === "grandchild") await waitUntil(() => ws.pids().length >= 2, 2_000);
  const pids = ws.pids();
  const started = Date.now();
  await client.close();
  const closeMs = Date.now() - started;
  const aliveWhenCloseReturned = pids.filter(isAlive);
  const round = { pids, aliveWhenCloseReturned, aliveLater: aliveWhenCloseReturned, closeMs };
  report(ctx, round, false);
  return round;
}

function report(ctx: DemoContext, round: Round, lookedAgain = true): void {
  const list = (pids: number[]) => (pids.length === 0 ? say(ctx.lang, { zh: "无", en: "none" }) : pids.join(", "));
  ctx.out(
    say(ctx.lang, {
      zh: "  fixture 记录的进程：{pids}\n  close() 用时 {ms} ms；它返回时仍存活：{now}",
      en: "  processes the fixture recorded: {pids}\n  close() took {ms} ms; alive when it returned: {now}",
    }, { pids: round.pids.join(", "), ms: round.closeMs, now: list(round.aliveWhenCloseReturned) }),
  );
  if (lookedAgain) {
    ctx.out(say(ctx.lang, { zh: "  再观察最多 {wait} ms 后仍存活：{later}", en: "  still alive after watching up to {wait} ms more: {later}" }, {
      wait: OBSERVE_MS,
      later: list(round.aliveLater),
    }));
  }
}

export const orphan: DemoCase = {
  id: "orphan",
  title: { zh: "close() 之后还活着的进程", en: "processes alive after close()" },
  shows: {
    zh: "只发 SIGTERM 就返回的 close 会留下活着的 pid（服务端忽略 SIGTERM，或留下孙进程）；参考实现的 close 等到进程组全部退出才 resolve。",
    en: "A close that sends SIGTERM and returns leaves live pids behind (a server that ignores SIGTERM, or one that leaves a grandchild); the reference close resolves only once the whole process group is gone.",
  },
  async run(ctx, stage) {
    const naiveTerm = await naiveRound(ctx, stage, "ignore-sigterm", {
      zh: "① 反模式 close：kill(\"SIGTERM\") 后立即返回；服务端忽略 SIGTERM",
      en: "① anti-pattern close: kill(\"SIGTERM\") and return at once; the server ignores SIGTERM",
    });
    ctx.out(say(ctx.lang, {
      zh: "  → 没有等待 exit，也没有 SIGKILL 兜底：这个进程会一直活到演示收尾把它杀掉。",
      en: "  → no wait for the exit and no SIGKILL fallback: this process lives until the demo's teardown kills it.",
    }));
    const safeTerm = await safeRound(ctx, stage, "ignore-sigterm", {
      zh: "② 参考实现 close：SIGTERM，{ms} ms 宽限后 SIGKILL，等到 exit 才 resolve",
      en: "② reference close: SIGTERM, SIGKILL after a {ms} ms grace, resolve only after the exit",
    });
    const naiveGrand = await naiveRound(ctx, stage, "grandchild", {
      zh: "③ 反模式 close 遇到会留下孙进程的服务端（只给父进程发信号）",
      en: "③ anti-pattern close against a server that leaves a grandchild (only the leader is signalled)",
    });
    ctx.out(say(ctx.lang, {
      zh: "  → 父进程退出了，但孙进程还在同一个进程组里，继续占着 stdout/stderr 管道。",
      en: "  → the leader exited, but the grandchild is still alive in the same process group, holding the stdout/stderr pipes.",
    }));
    const safeGrand = await safeRound(ctx, stage, "grandchild", {
      zh: "④ 参考实现 close：向整个进程组发信号，并等到组内成员消失",
      en: "④ reference close: signal the whole process group and wait until its members are gone",
    });
    const ok =
      naiveTerm.aliveWhenCloseReturned.length === 1 && naiveTerm.aliveLater.length === 1 &&
      safeTerm.aliveWhenCloseReturned.length === 0 &&
      naiveGrand.pids.length === 2 && naiveGrand.aliveLater.length === 1 && naiveGrand.aliveLater[0] === naiveGrand.pids[1] &&
      safeGrand.pids.length === 2 && safeGrand.aliveWhenCloseReturned.length === 0;
    return { ok, facts: { naiveTerm, safeTerm, naiveGrand, safeGrand } };
  },
};
