// swap: two calls, answered in the opposite order. The fixture holds "slow" until it has
// answered "fast" (echo `after`), so the order is decided by the server, every run.

import type { FixtureCommand } from "../../../fixtures/index.ts";
import { McpClient } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { DEMO_SELF_DESTRUCT_MS, heading, tell, waitUntil, type DemoCase, type DemoContext, type Stage } from "../demo.ts";
import { FifoClient, SlotClient } from "../naive-clients.ts";
import { Timeline, type Settlement } from "../timeline.ts";
import type { Text } from "../i18n.ts";

const SLOW = { value: "slow", after: "fast" };
const FAST = { value: "fast" };

type Observed = "slow" | "fast" | "hung" | "rejected" | "other";

interface Round {
  slow: Observed;
  fast: Observed;
  /** Whether the client closed with nothing pending and its process gone (naive clients: true). */
  closedClean: boolean;
}

function observed(outcome: Settlement | undefined): Observed {
  if (!outcome || outcome.status === "hung") return "hung";
  if (outcome.status === "rejected") return "rejected";
  const content = (outcome.value as { content?: unknown } | undefined)?.content;
  return content === "slow" || content === "fast" ? content : "other";
}

// Right when the promise labelled X resolved with { content: X }.
function judge(label: string) {
  return (outcome: Settlement) =>
    outcome.status === "fulfilled" && (outcome.value as { content?: unknown })?.content === label ? "good" : "bad";
}

interface Client {
  initialize(): Promise<unknown>;
  callTool(name: string, args: Record<string, unknown>): Promise<unknown>;
}

interface Contender {
  title: Text;
  make(command: FixtureCommand): Client;
  /** Said once the round is over. */
  lesson: Text;
}

// The three clients shown, in order.
const CONTENDERS: [slot: Contender, fifo: Contender, safe: Contender] = [
  {
    title: { zh: "① 反模式 SlotClient（课程里的 currentResolve 写法）", en: "① anti-pattern SlotClient (the lesson's currentResolve)" },
    make: (command) => new SlotClient(command),
    lesson: { zh: "  → fast 的 resolve 覆盖了 slow 的槽位：fast 碰巧拿对了，slow 的应答到达时已无人接收，slow 永远挂起。", en: "  → fast's resolver overwrote slow's slot: fast happens to get its own answer; when slow's answer arrives nobody holds slow's resolver, so slow hangs forever." },
  },
  {
    title: { zh: "② 反模式 FifoClient（按发送顺序分发应答，忽略 id）", en: "② anti-pattern FifoClient (answers handed out in send order, ids ignored)" },
    make: (command) => new FifoClient(command),
    lesson: { zh: "  → 第一条应答（id 属于 fast）被交给队首的 slow，第二条交给 fast：两个结果互换，而且没有任何报错。", en: "  → the first answer (fast's id) went to the head of the queue, slow; the second went to fast: the results are swapped, silently." },
  },
  {
    title: { zh: "③ 参考实现 McpClient（id → pending 记录）", en: "③ reference McpClient (id → pending record)" },
    make: (command) => new McpClient({ ...command, timeoutMs: 10_000 }),
    lesson: { zh: "  → 每条应答只按 id 找到自己的 pending 记录：fast 先完成，slow 的记录一直留在 Map 里，直到 id 相同的应答到达。", en: "  → each answer finds its own pending record by id alone: fast completes first, slow's record waits in the map until the answer with its id arrives." },
  },
];

// Stops a round's client: the naive ones are disposed; the reference one must close with
// nothing pending and its process gone, which the result says.
async function stop(client: Client): Promise<boolean> {
  if (!(client instanceof McpClient)) {
    (client as SlotClient | FifoClient).dispose();
    return true;
  }
  const nothingPending = client.pendingCount === 0;
  await client.close();
  return nothingPending && client.pid === undefined;
}

async function round(ctx: DemoContext, stage: Stage, contender: Contender): Promise<Round> {
  heading(ctx, contender.title);
  const ws = stage.workspace();
  const client = contender.make(ws.command({ selfDestructMs: DEMO_SELF_DESTRUCT_MS }));
  await client.initialize();
  // The handshake's last message is a notification nobody answers; wait until the server
  // logged it so the timeline starts with the two calls.
  await waitUntil(() => ws.log().some((e) => e.msg?.method === "notifications/initialized"), 2_000);
  const timeline = new Timeline(ctx.lang, ws.log);
  timeline.note({
    zh: "（握手已完成，下面只看两次调用）先发 slow —— 服务端会扣住它，直到 fast 已经回答；再发 fast。",
    en: "(handshake done; only the two calls are shown) send slow first (the server holds it until fast was answered), then fast.",
  });
  const slow = timeline.track("slow", client.callTool("echo", SLOW), judge("slow"));
  const fast = timeline.track("fast", client.callTool("echo", FAST), judge("fast"));
  await timeline.waitAll(ctx.deadlineMs, () => "bad");
  for (const line of timeline.render()) ctx.out(line);
  const closedClean = await stop(client);
  tell(ctx, contender.lesson);
  return { slow: observed(slow.outcome), fast: observed(fast.outcome), closedClean };
}

export const swap: DemoCase = {
  id: "swap",
  title: { zh: "乱序响应：谁拿到了谁的答案", en: "out-of-order answers: who got whose answer" },
  shows: { zh: "同一串请求与乱序应答，分别交给「当前槽位」客户端、FIFO 客户端和参考实现 McpClient。", en: "The same two requests and the same out-of-order answers, given to a current-slot client, a FIFO client and the reference McpClient." },
  async run(ctx, stage) {
    const rounds: Round[] = [];
    for (const contender of CONTENDERS) rounds.push(await round(ctx, stage, contender));
    const [slot, fifo, safe] = rounds as [Round, Round, Round];
    const closedClean = safe.closedClean;
    const ok =
      slot.fast === "fast" && slot.slow === "hung" &&
      fifo.slow === "fast" && fifo.fast === "slow" &&
      safe.slow === "slow" && safe.fast === "fast" && closedClean;
    const answers = ({ slow, fast }: Round) => ({ slow, fast });
    return { ok, facts: { slot: answers(slot), fifo: answers(fifo), safe: answers(safe), safeClosedClean: closedClean } };
  },
};
