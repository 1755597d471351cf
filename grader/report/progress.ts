// What the text report adds for a learner: progress by TODO (from the checks that cover
// each TODO and the TODO(...) markers still in the submission), the wire trace of the first
// failing test as → / ← lines, and paths of the grader's private copy mapped back to the
// learner's own files.

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { CheckStatus, Lang, TodoDef } from "../manifest.ts";
import type { CheckResult, TodoProgress, TodoState, TraceEntry } from "../result-types.ts";

export type { TodoProgress, TodoState } from "../result-types.ts";

const ROOT = resolve(import.meta.dirname, "..", "..");

/** Largest source file read for TODO markers, in bytes. */
const MAX_SOURCE_BYTES = 512 * 1024;
/** Most bytes read for TODO markers in all, and the longest tag: the scan runs in the grader's
 *  own process, so its time must stay linear in what it reads and small. */
const MAX_SCAN_BYTES = 2 * 1024 * 1024;
/** A TODO(...) tag, at most 100 characters: bounded, so a line of "TODO(" repeated with no ")"
 *  costs linear time (unbounded, 64 KiB of it took 1.4 s and 512 KiB blocked a grade for 97 s). */
const TODO_TAG = /TODO\(([^)\n]{1,100})\)/g;

// The TODO(...) tags still written in the submission's source files, or undefined when the
// folder cannot be read (a result re-rendered elsewhere).
export function todoMarkers(submission: string): Set<string> | undefined {
  if (!submission || !existsSync(submission)) return undefined;
  const tags = new Set<string>();
  let budget = MAX_SCAN_BYTES;
  const walk = (dir: string, depth: number) => {
    if (depth > 6) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full, depth + 1);
      else if (entry.isFile() && /\.[cm]?[tj]s$/.test(entry.name)) {
        const size = statSync(full).size;
        if (size > MAX_SOURCE_BYTES || size > budget) continue;
        budget -= size;
        for (const m of readFileSync(full, "utf8").matchAll(TODO_TAG)) tags.add(m[1]!);
      }
    }
  };
  try {
    walk(submission, 0);
  } catch {
    return undefined;
  }
  return tags;
}

/** "needs TODO(x) first" in either language, as the lab's tests write it. */
const NEEDS = /(?:需要先完成|needs) TODO\(([^)\n]+)\)/;

interface Failure {
  check: string;
  test?: string;
  /** The TODO whose work the failure shows missing. */
  charge: string;
  /** The TODO that owns the failing test. */
  owner: string;
}

// The TODO that owns a test: the longest title part among the TODOs' tests that the title
// contains, else the first TODO listing the check.
function ownerOf(todos: TodoDef[], check: string, test: string | undefined): string | undefined {
  let best: { tag: string; length: number } | undefined;
  if (test !== undefined) {
    for (const todo of todos) {
      for (const own of todo.tests ?? []) {
        if (own.check === check && test.includes(own.test) && own.test.length > (best?.length ?? -1)) best = { tag: todo.tag, length: own.test.length };
      }
    }
  }
  return best?.tag ?? todos.find((t) => t.checks.includes(check))?.tag;
}

// Every failure of the result with the TODO it is charged to: the one its message says it
// needs first, else the one whose blame pattern its message matches (a clean shutdown that
// fails is close()'s fault in any test), else the test's owner.
export function chargeFailures(todos: TodoDef[], checks: CheckResult[]): Failure[] {
  const tags = new Set(todos.map((t) => t.tag));
  const patterns = todos.flatMap((t) => (t.blame ?? []).map((source) => ({ tag: t.tag, re: new RegExp(source, "m") })));
  const out: Failure[] = [];
  for (const check of checks) {
    if (check.status === "pass") continue;
    const failed = check.tests.filter((x) => x.status === "fail");
    const items = failed.length > 0 ? failed.map((x) => ({ test: x.title as string | undefined, message: x.message ?? "" })) : [{ test: undefined, message: check.message }];
    for (const { test, message } of items) {
      const owner = ownerOf(todos, check.id, test);
      if (!owner) continue;
      const needed = NEEDS.exec(message)?.[1];
      const blamed = patterns.find((p) => p.re.test(message))?.tag;
      const charge = needed && tags.has(needed) ? needed : (blamed ?? owner);
      out.push({ check: check.id, ...(test === undefined ? {} : { test }), charge, owner });
    }
  }
  return out;
}

// Each TODO's state, in order. A TODO is done when no failure is charged to it; with one it
// is "not yet" while its TODO(...) marker is still in the source and "broken" once the
// marker is gone. A TODO whose own tests fail only for want of another TODO is done, waiting
// on that one. Without the source (markers undefined), a TODO none of whose checks passes
// counts as not yet.
export function todoProgress(todos: TodoDef[], checks: CheckResult[], lang: Lang, markers: Set<string> | undefined): TodoProgress[] {
  const status = new Map<string, CheckStatus>(checks.map((c) => [c.id, c.status]));
  const failures = chargeFailures(todos, checks);
  return todos.map((todo) => {
    const known = todo.checks.filter((id) => status.has(id));
    const owned = (todo.tests ?? []).some((t) => status.has(t.check));
    const charged = failures.filter((f) => f.charge === todo.tag);
    const failing = [...new Set(charged.map((f) => f.check))];
    const waitingOn = [...new Set(failures.filter((f) => f.owner === todo.tag && f.charge !== todo.tag).map((f) => f.charge))];
    let state: TodoState;
    if (known.length === 0 && !owned && charged.length === 0) state = "unchecked";
    else if (charged.length === 0) state = "done";
    else if (markers ? markers.has(todo.tag) : known.every((id) => status.get(id) !== "pass")) state = "not-yet";
    else state = "broken";
    const label = lang === "en" && todo.name ? todo.name : todo.tag;
    return {
      tag: todo.tag,
      ...(label === todo.tag ? {} : { label }),
      title: todo.title[lang],
      section: todo.section,
      lesson: todo.lesson,
      state,
      failing,
      charged: charged.map((f) => ({ check: f.check, ...(f.test === undefined ? {} : { test: f.test }) })),
      waitingOn: state === "done" ? waitingOn : [],
    };
  });
}

const words = {
  zh: {
    heading: "按 TODO 的进度（按顺序做）",
    state: { done: "完成", "not-yet": "还没做", broken: "有问题", unchecked: "不评分" },
    failing: "未通过的检查",
    waiting: "这一项的测试还需要先完成 {tags}，现在失败不是这一项的错",
    next: "下一步：TODO({tag})，课程 {section} 节 {lesson}",
    allDone: "全部 TODO 都已完成。",
    markerNote: "做完一项就删掉代码里那一项的 TODO(...) 标记，报告才能区分“还没做”和“有问题”。",
    trace: "第一个失败的测试在管道上的记录（→ 客户端发给服务器，← 服务器回给客户端）",
    more: "… 另有 {count} 条",
  },
  en: {
    heading: "Progress by TODO (do them in order)",
    state: { done: "done", "not-yet": "not yet", broken: "broken", unchecked: "not graded" },
    failing: "checks not passing",
    waiting: "this TODO's tests need {tags} first; failing now is not this TODO's fault",
    next: "next: TODO({tag}), lesson section {section} {lesson}",
    allDone: "Every TODO is done.",
    markerNote: "Delete a TODO's TODO(...) markers from your code when it is done, so the report can tell \"not yet\" from \"broken\".",
    trace: "What went over the pipe in the first failing test (→ client to server, ← server to client)",
    more: "… {count} more",
  },
} as const;

const mark: Record<TodoState, string> = { done: "✔", "not-yet": "·", broken: "✘", unchecked: "–" };

// The TODO list with states and the next step, as report lines. English lesson links point
// at the English companion (README.en.md has the same anchors).
export function renderProgress(progress: TodoProgress[], lang: Lang): string[] {
  const w = words[lang];
  const lines = [`== ${w.heading} ==`];
  const labelOf = (tag: string) => progress.find((p) => p.tag === tag)?.label ?? tag;
  progress.forEach((p, i) => {
    lines.push(`${mark[p.state]} ${i + 1}. TODO(${labelOf(p.tag)})  ${w.state[p.state]} · ${p.title} (§${p.section})`);
    if (p.state === "done" && p.waitingOn.length > 0) {
      lines.push(`    ${w.waiting.replace("{tags}", p.waitingOn.map((t) => `TODO(${labelOf(t)})`).join(", "))}`);
    } else if (p.state === "broken" || p.state === "not-yet") lines.push(`    ${w.failing}: ${p.failing.join(", ")}`);
  });
  const next = progress.find((p) => p.state === "broken") ?? progress.find((p) => p.state === "not-yet");
  if (next) {
    lines.push("", w.next.replace("{tag}", labelOf(next.tag)).replace("{section}", next.section).replace("{lesson}", lessonLink(next.lesson, lang)));
    if (progress.some((p) => p.state === "not-yet")) lines.push(w.markerNote);
  } else lines.push("", w.allDone);
  return lines;
}

/** A lesson link in the reader's language: the English companion for English reports. */
export function lessonLink(lesson: string, lang: Lang): string {
  return lang === "en" ? lesson.replace(/\/README\.md(?=#|$)/, "/README.en.md") : lesson;
}

/** Longest wire-trace line, in characters. */
const TRACE_LINE_CHARS = 110;
/** Trace lines shown: the first ones and the last ones around an ellipsis. */
const TRACE_HEAD = 14;
const TRACE_TAIL = 4;

// One message as a compact line: "→ #3 tools/call echo {"value":"slow"}", "← #3 error -32050 quota".
export function traceLine(entry: TraceEntry): string {
  const arrow = entry.dir === "in" ? "→" : "←";
  const m = (entry.msg ?? {}) as Record<string, any>;
  let text: string;
  if (typeof m.raw === "string") text = `(not JSON) ${JSON.stringify(m.raw)}`;
  else {
    const id = m.id === undefined ? "" : `#${JSON.stringify(m.id)} `;
    if (typeof m.method === "string") {
      const tool = m.method === "tools/call" && typeof m.params?.name === "string" ? ` ${m.params.name} ${compact(m.params.arguments)}` : "";
      text = `${id}${m.method}${tool}`;
    } else if (m.error !== undefined) text = `${id}error ${m.error?.code ?? ""} ${m.error?.message ?? ""}`;
    else text = `${id}result ${compact(m.result)}`;
  }
  const line = `${arrow} ${text}`.trimEnd();
  return line.length > TRACE_LINE_CHARS ? `${line.slice(0, TRACE_LINE_CHARS - 1)}…` : line;
}

function compact(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return String(value);
  }
}

// The first failing test's trace, as report lines (none when no failing test has one).
export function renderTrace(checks: CheckResult[], lang: Lang): string[] {
  for (const check of checks) {
    if (check.kind === "homework") continue;
    const test = check.tests.find((x) => x.status === "fail" && (x.trace?.length ?? 0) > 0);
    if (!test) continue;
    const trace = test.trace!;
    const lines = [`== ${words[lang].trace}: ${check.id} › ${test.label ?? test.title} ==`];
    const shown = trace.length > TRACE_HEAD + TRACE_TAIL + 1 ? [...trace.slice(0, TRACE_HEAD), undefined, ...trace.slice(-TRACE_TAIL)] : trace;
    for (const entry of shown) {
      lines.push(entry ? traceLine(entry) : words[lang].more.replace("{count}", String(trace.length - TRACE_HEAD - TRACE_TAIL)));
    }
    return lines;
  }
  return [];
}

// Rewrites paths inside the grader's private copy of a submission (".../submission/src/x.ts:12:3",
// deleted after the grade) to the learner's own file, relative to the workbook when inside it.
export function mapPaths(text: string, submission: string): string {
  if (!submission) return text;
  const own = relative(ROOT, submission);
  const shown = own.startsWith("..") ? submission : own;
  return text.replace(/(?:file:\/\/)?\/[^\s()'"`]*?\/submission\/([^\s()'"`:]+)/g, (whole, inner: string) =>
    whole.startsWith(submission) ? whole : `${shown}/${inner}`,
  );
}
