// The demo's record of what happened: what crossed the pipe (read from the fixture's own
// message log, so it is the server's view, not the client's claim), which promise got which
// answer, and the narration around them, printed in order.

import type { LogEntry } from "../../fixtures/index.ts";
import { say, type Lang, type Text } from "./i18n.ts";

export type Settlement =
  | { status: "fulfilled"; value: unknown }
  | { status: "rejected"; reason: unknown }
  | { status: "hung" };

export interface Tracked {
  readonly label: string;
  /** How it settled, or "hung" once the demo gave up on it; undefined while open. */
  outcome: Settlement | undefined;
  done: Promise<void>;
}

type Event =
  | { kind: "note"; text: string }
  | { kind: "pipe"; entry: LogEntry }
  | { kind: "settled"; label: string; outcome: Settlement; verdict: "good" | "bad" | "info"; atMs: number };

export class Timeline {
  readonly lang: Lang;
  private readonly events: Event[] = [];
  private readonly readLog: () => LogEntry[];
  private logSeen: number;
  private readonly startedAt = Date.now();
  private readonly tracked: Tracked[] = [];

  // `readLog` reads the fixture's log; entries already there (the handshake) are skipped.
  constructor(lang: Lang, readLog: () => LogEntry[], skipExisting = true) {
    this.lang = lang;
    this.readLog = readLog;
    this.logSeen = skipExisting ? readLog().length : 0;
  }

  note(text: Text, vars?: Record<string, unknown>): void {
    this.catchUp();
    this.events.push({ kind: "note", text: say(this.lang, text, vars) });
  }

  // Pulls in every pipe message the server logged so far. The server logs a message before
  // acting on it or writing it, so anything the client reacted to is already there.
  catchUp(): void {
    const log = this.readLog();
    for (const entry of log.slice(this.logSeen)) this.events.push({ kind: "pipe", entry });
    this.logSeen = Math.max(this.logSeen, log.length);
  }

  settled(label: string, outcome: Settlement, verdict: "good" | "bad" | "info"): void {
    this.catchUp();
    this.events.push({ kind: "settled", label, outcome, verdict, atMs: Date.now() - this.startedAt });
  }

  // Watches a promise and records how it settles, unless the demo already gave up on it.
  track(label: string, promise: Promise<unknown>, judge: (outcome: Settlement) => "good" | "bad" | "info"): Tracked {
    const tracked: Tracked = { label, outcome: undefined, done: undefined as unknown as Promise<void> };
    const record = (outcome: Settlement) => {
      if (tracked.outcome) return; // cut off earlier: a late settlement is not part of the story
      tracked.outcome = outcome;
      this.settled(label, outcome, judge(outcome));
    };
    tracked.done = promise.then(
      (value) => record({ status: "fulfilled", value }),
      (reason) => record({ status: "rejected", reason }),
    );
    this.tracked.push(tracked);
    return tracked;
  }

  // Waits until every tracked promise settled or `deadlineMs` passed; the ones still open
  // are recorded as hung. Returns how many hung.
  async waitAll(deadlineMs: number, judgeHung: (label: string) => "good" | "bad" | "info"): Promise<number> {
    const open = this.tracked.filter((t) => !t.outcome);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
    await Promise.race([Promise.all(open.map((t) => t.done)), deadline]);
    clearTimeout(timer);
    let hung = 0;
    for (const t of open) {
      if (t.outcome) continue;
      t.outcome = { status: "hung" };
      this.settled(t.label, t.outcome, judgeHung(t.label));
      hung += 1;
    }
    return hung;
  }

  render(): string[] {
    this.catchUp();
    const lines: string[] = [];
    for (const event of this.events) {
      if (event.kind === "note") lines.push(`  ${event.text}`);
      else if (event.kind === "pipe") lines.push(`    ${describePipe(this.lang, event.entry)}`);
      else lines.push(`  ${describeSettled(this.lang, event)}`);
    }
    return lines;
  }
}

const ARROW_IN: Text = { zh: "客户端 → 服务端", en: "client → server" };
const ARROW_OUT: Text = { zh: "服务端 → 客户端", en: "server → client" };

// One line per message, short: id, method or outcome, and the tool arguments or result.
function describePipe(lang: Lang, entry: LogEntry): string {
  const arrow = say(lang, entry.dir === "in" ? ARROW_IN : ARROW_OUT);
  const msg = entry.msg ?? {};
  if ("raw" in msg) return `${arrow}  ${clip(JSON.stringify(msg.raw))}`;
  const id = "id" in msg ? `id=${JSON.stringify(msg.id)} ` : "";
  if (typeof msg.method === "string") {
    const detail =
      msg.method === "tools/call"
        ? `${msg.params?.name} ${clip(JSON.stringify(msg.params?.arguments ?? {}))}`
        : msg.method === "notifications/cancelled"
          ? clip(JSON.stringify(msg.params ?? {}))
          : "";
    return `${arrow}  ${id}${msg.method} ${detail}`.trimEnd();
  }
  if ("error" in msg) return `${arrow}  ${id}error ${clip(JSON.stringify(msg.error))}`;
  return `${arrow}  ${id}result ${clip(JSON.stringify(msg.result))}`;
}

const MARK = { good: "✔", bad: "✘", info: "•" } as const;

function describeSettled(lang: Lang, event: Extract<Event, { kind: "settled" }>): string {
  const { label, outcome, verdict, atMs } = event;
  const at = `[+${atMs} ms]`;
  if (outcome.status === "fulfilled") {
    const text: Text = { zh: "{mark} Promise「{label}」resolve → {value}  {at}", en: "{mark} promise \"{label}\" resolved → {value}  {at}" };
    return say(lang, text, { mark: MARK[verdict], label, value: clip(JSON.stringify(outcome.value)), at });
  }
  if (outcome.status === "rejected") {
    const reason = outcome.reason as { code?: string; message?: string };
    const text: Text = { zh: "{mark} Promise「{label}」reject → {code} {message}  {at}", en: "{mark} promise \"{label}\" rejected → {code} {message}  {at}" };
    return say(lang, text, { mark: MARK[verdict], label, code: reason?.code ?? "", message: clip(reason?.message ?? String(reason), 100), at });
  }
  const text: Text = {
    zh: "{mark} Promise「{label}」一直没有结束（演示在截止时间后放弃等待）  {at}",
    en: "{mark} promise \"{label}\" never settled (the demo stopped waiting at its deadline)  {at}",
  };
  return say(lang, text, { mark: MARK[verdict], label, at });
}

function clip(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
