// orphan: does the server process outlive close()? Two servers that make it hard: one that
// ignores SIGTERM, and one that leaves a grandchild behind in its process group.

import { isAlive, type FixtureCommand, type Scenario } from "../../../fixtures/index.ts";
import { McpClient } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { DEMO_SELF_DESTRUCT_MS, heading, sleep, tell, waitUntil, type DemoCase, type DemoContext, type Stage } from "../demo.ts";
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

interface Closable {
  initialize(): Promise<unknown>;
  close(): Promise<void>;
  dispose?(): void;
}

// One close() against one difficult server: starts it through `make`, times close(), and
// lists the recorded pids still alive then and (for a close that does not wait) a while later.
async function closeRound(ctx: DemoContext, stage: Stage, scenario: Scenario, title: Text, make: (command: FixtureCommand) => Closable, lookAgain: boolean): Promise<Round> {
  heading(ctx, title, { ms: CLOSE_TIMEOUT_MS });
  const ws = stage.workspace();
  const client = make(ws.command({ scenarios: [scenario], selfDestructMs: DEMO_SELF_DESTRUCT_MS }));
  await client.initialize();
  if (scenario === "grandchild") await waitUntil(() => ws.pids().length >= 2, 2_000);
  const pids = ws.pids();
  const started = Date.now();
  await client.close();
  const closeMs = Date.now() - started;
  const aliveWhenCloseReturned = pids.filter(isAlive);
  let aliveLater = aliveWhenCloseReturned;
  if (lookAgain) {
    // Give the processes every chance to go away on their own, then look again.
    if (scenario === "grandchild") await waitUntil(() => !isAlive(pids[0]!), OBSERVE_MS);
    else await sleep(OBSERVE_MS);
    aliveLater = pids.filter(isAlive);
  }
  client.dispose?.();
  const round = { pids, aliveWhenCloseReturned, aliveLater, closeMs };
  report(ctx, round, lookAgain);
  return round;
}

function report(ctx: DemoContext, round: Round, lookedAgain: boolean): void {
  const list = (pids: number[]) => (pids.length === 0 ? say(ctx.lang, { zh: "无", en: "none" }) : pids.join(", "));
  tell(ctx, {
    zh: "  fixture 记录的进程：{pids}\n  close() 用时 {ms} ms；它返回时仍存活：{now}",
    en: "  processes the fixture recorded: {pids}\n  close() took {ms} ms; alive when it returned: {now}",
  }, { pids: round.pids.join(", "), ms: round.closeMs, now: list(round.aliveWhenCloseReturned) });
  if (lookedAgain) {
    tell(ctx, { zh: "  再观察最多 {wait} ms 后仍存活：{later}", en: "  still alive after watching up to {wait} ms more: {later}" }, { wait: OBSERVE_MS, later: list(round.aliveLater) });
  }
}

// The two servers that make close() hard, each shown first to the anti-pattern close, then to the reference.
const SCENES = [
  {
    scenario: "ignore-sigterm",
    naive: { zh: "① 反模式 close：kill(\"SIGTERM\") 后立即返回；服务端忽略 SIGTERM", en: "① anti-pattern close: kill(\"SIGTERM\") and return at once; the server ignores SIGTERM" },
    lesson: { zh: "  → 没有等待 exit，也没有 SIGKILL 兜底：这个进程会一直活到演示收尾把它杀掉。", en: "  → no wait for the exit and no SIGKILL fallback: this process lives until the demo's teardown kills it." },
    safe: { zh: "② 参考实现 close：SIGTERM，{ms} ms 宽限后 SIGKILL，等到 exit 才 resolve", en: "② reference close: SIGTERM, SIGKILL after a {ms} ms grace, resolve only after the exit" },
  },
  {
    scenario: "grandchild",
    naive: { zh: "③ 反模式 close 遇到会留下孙进程的服务端（只给父进程发信号）", en: "③ anti-pattern close against a server that leaves a grandchild (only the leader is signalled)" },
    lesson: { zh: "  → 父进程退出了，但孙进程还在同一个进程组里，继续占着 stdout/stderr 管道。", en: "  → the leader exited, but the grandchild is still alive in the same process group, holding the stdout/stderr pipes." },
    safe: { zh: "④ 参考实现 close：向整个进程组发信号，并等到组内成员消失", en: "④ reference close: signal the whole process group and wait until its members are gone" },
  },
] as const;

export const orphan: DemoCase = {
  id: "orphan",
  title: { zh: "close() 之后还活着的进程", en: "processes alive after close()" },
  shows: { zh: "只发 SIGTERM 就返回的 close 会留下活着的 pid（服务端忽略 SIGTERM，或留下孙进程）；参考实现的 close 等到进程组全部退出才 resolve。", en: "A close that sends SIGTERM and returns leaves live pids behind (a server that ignores SIGTERM, or one that leaves a grandchild); the reference close resolves only once the whole process group is gone." },
  async run(ctx, stage) {
    const rounds: Array<{ naive: Round; safe: Round }> = [];
    for (const scene of SCENES) {
      const naive = await closeRound(ctx, stage, scene.scenario, scene.naive, (command) => new SlotClient(command), true);
      tell(ctx, scene.lesson);
      const safe = await closeRound(ctx, stage, scene.scenario, scene.safe, (command) => new McpClient({ ...command, closeTimeoutMs: CLOSE_TIMEOUT_MS }), false);
      rounds.push({ naive, safe });
    }
    const [{ naive: naiveTerm, safe: safeTerm }, { naive: naiveGrand, safe: safeGrand }] = rounds as [(typeof rounds)[number], (typeof rounds)[number]];
    const ok =
      naiveTerm.aliveWhenCloseReturned.length === 1 && naiveTerm.aliveLater.length === 1 &&
      safeTerm.aliveWhenCloseReturned.length === 0 &&
      naiveGrand.pids.length === 2 && naiveGrand.aliveLater.length === 1 && naiveGrand.aliveLater[0] === naiveGrand.pids[1] &&
      safeGrand.pids.length === 2 && safeGrand.aliveWhenCloseReturned.length === 0;
    return { ok, facts: { naiveTerm, safeTerm, naiveGrand, safeGrand } };
  },
};
