// What every demo case shares: its context (language, output, deadline), the result the
// CLI and the tests read, and a fixture workspace whose processes are always reaped.

import { createFixtureWorkspace, isAlive, type FixtureWorkspace } from "../../fixtures/index.ts";
import { say, type Lang, type Text } from "./i18n.ts";

/** How long a demo waits for a promise before it calls it hung, in ms. */
export const DEFAULT_DEADLINE_MS = 1_500;

/** Self-destruct for every fixture a demo starts, in case a demo itself is killed. */
export const DEMO_SELF_DESTRUCT_MS = 20_000;

export interface DemoContext {
  lang: Lang;
  out: (line: string) => void;
  /** Ms after which a promise that has not settled is reported as hung. */
  deadlineMs: number;
}

export interface DemoResult {
  /** True when every client behaved as the demo says it would. */
  ok: boolean;
  /** What was observed, for tests and for `--json`. */
  facts: Record<string, unknown>;
  /** Every pid the demo's fixture servers (and their children) recorded. */
  startedPids: number[];
  /** Pids still alive after the demo's own teardown; always empty unless something is badly wrong. */
  survivors: number[];
}

export interface DemoCase {
  id: string;
  title: Text;
  /** One sentence: what the class will see. */
  shows: Text;
  run(ctx: DemoContext, stage: Stage): Promise<{ ok: boolean; facts: Record<string, unknown> }>;
}

// Hands out fixture workspaces and remembers them, so the runner can reap them all.
export class Stage {
  private readonly workspaces: FixtureWorkspace[] = [];

  workspace(): FixtureWorkspace {
    const ws = createFixtureWorkspace("lab33-demo-");
    this.workspaces.push(ws);
    return ws;
  }

  pids(): number[] {
    return this.workspaces.flatMap((ws) => ws.pids());
  }

  // Kills whatever is still alive and removes the workspaces; returns pids that survived.
  async teardown(): Promise<{ started: number[]; survivors: number[] }> {
    const started = this.pids();
    for (const ws of this.workspaces) await ws.cleanup();
    return { started, survivors: started.filter(isAlive) };
  }
}

export async function runDemo(demo: DemoCase, ctx: DemoContext): Promise<DemoResult> {
  const stage = new Stage();
  const line = (text: Text, vars?: Record<string, unknown>) => ctx.out(say(ctx.lang, text, vars));
  line({ zh: "━━ 演示 {id}：{title}", en: "━━ demo {id}: {title}" }, { id: demo.id, title: say(ctx.lang, demo.title) });
  line(demo.shows);
  let outcome: { ok: boolean; facts: Record<string, unknown> } = { ok: false, facts: {} };
  let failure: unknown;
  try {
    outcome = await demo.run(ctx, stage);
  } catch (error) {
    failure = error;
  }
  const { started, survivors } = await stage.teardown();
  ctx.out("");
  line(
    { zh: "收尾：本演示启动过 {started} 个进程，收尾后仍存活 {alive} 个。", en: "Teardown: this demo started {started} process(es); {alive} still alive after teardown." },
    { started: started.length, alive: survivors.length },
  );
  if (failure !== undefined) {
    line({ zh: "演示本身出错：{error}", en: "The demo itself failed: {error}" }, { error: (failure as Error)?.stack ?? String(failure) });
  }
  const ok = failure === undefined && outcome.ok && survivors.length === 0;
  line(
    ok
      ? { zh: "结论：演示展示了它承诺的行为。", en: "Verdict: the demo showed what it promised." }
      : { zh: "结论：演示没有得到预期的行为（见上文），请检查客户端或环境。", en: "Verdict: the demo did NOT show the expected behaviour (see above); check the client or the environment." },
  );
  return { ok, facts: outcome.facts, startedPids: started, survivors };
}

/** Prints one line of text in the demo's language. */
export function tell(ctx: DemoContext, text: Text, vars?: Record<string, unknown>): void {
  ctx.out(say(ctx.lang, text, vars));
}

/** Renders a section heading. */
export function heading(ctx: DemoContext, text: Text, vars?: Record<string, unknown>): void {
  ctx.out("");
  tell(ctx, text, vars);
}

/** Resolves after `ms`; for pauses the fixture does not decide (only "is it still alive?" checks). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until the condition holds or `ms` passed; returns whether it held. */
export async function waitUntil(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}
