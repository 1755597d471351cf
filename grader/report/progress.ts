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

// The TODO(...) tags still written in the submission's source files, or undefined when the
// folder cannot be read (a result re-rendered elsewhere).
export function todoMarkers(submission: string): Set<string> | undefined {
  if (!submission || !existsSync(submission)) return undefined;
  const tags = new Set<string>();
  const walk = (dir: string, depth: number) => {
    if (depth > 6) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full, depth + 1);
      else if (/\.[cm]?[tj]s$/.test(entry.name) && statSync(full).size <= MAX_SOURCE_BYTES) {
        for (const m of readFileSync(full, "utf8").matchAll(/TODO\(([^)\n]+)\)/g)) tags.add(m[1]!);
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

// Each TODO's state, in order. A TODO is done when every check covering it passes; with
// a failing check it is "not yet" while its TODO(...) marker is still in the source, and
// "broken" once the marker is gone, unless every failing check is also covered by a later
// TODO that is not done yet (then it counts as done, waiting on that TODO).
export function todoProgress(todos: TodoDef[], checks: CheckResult[], lang: Lang, markers: Set<string> | undefined): TodoProgress[] {
  const status = new Map<string, CheckStatus>(checks.map((c) => [c.id, c.status]));
  const out: TodoProgress[] = new Array(todos.length);
  for (let i = todos.length - 1; i >= 0; i--) {
    const todo = todos[i]!;
    const known = todo.checks.filter((id) => status.has(id));
    const failing = known.filter((id) => status.get(id) !== "pass");
    let state: TodoState;
    let waitingOn: string[] = [];
    if (known.length === 0) state = "unchecked";
    else if (failing.length === 0) state = "done";
    else if (markers ? markers.has(todo.tag) : failing.length === known.length) state = "not-yet";
    else {
      const later = out.slice(i + 1).filter((p) => p.state === "not-yet");
      const unexplained = failing.filter((id) => !later.some((p) => todos.find((t) => t.tag === p.tag)!.checks.includes(id)));
      if (unexplained.length === 0) {
        state = "done";
        waitingOn = later.filter((p) => failing.some((id) => todos.find((t) => t.tag === p.tag)!.checks.includes(id))).map((p) => p.tag);
      } else state = "broken";
    }
    out[i] = { tag: todo.tag, title: todo.title[lang], section: todo.section, lesson: todo.lesson, state, failing, waitingOn };
  }
  return out;
}

const words = {
  zh: {
    heading: "按 TODO 的进度（按顺序做）",
    state: { done: "完成", "not-yet": "还没做", broken: "有问题", unchecked: "不评分" },
    failing: "未通过的检查",
    waiting: "这些检查还需要后面的 {tags}，现在失败不是这一项的错",
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
    waiting: "these checks also need the later {tags}; failing now is not this TODO's fault",
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
  progress.forEach((p, i) => {
    lines.push(`${mark[p.state]} ${i + 1}. TODO(${p.tag})  ${w.state[p.state]} · ${p.title} (§${p.section})`);
    if (p.state === "done" && p.waitingOn.length > 0) {
      lines.push(`    ${w.waiting.replace("{tags}", p.waitingOn.map((t) => `TODO(${t})`).join(", "))}: ${p.failing.join(", ")}`);
    } else if (p.state === "broken" || p.state === "not-yet") lines.push(`    ${w.failing}: ${p.failing.join(", ")}`);
  });
  const next = progress.find((p) => p.state === "broken") ?? progress.find((p) => p.state === "not-yet");
  if (next) {
    lines.push("", w.next.replace("{tag}", next.tag).replace("{section}", next.section).replace("{lesson}", lessonLink(next.lesson, lang)));
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
    const lines = [`== ${words[lang].trace}: ${check.id} › ${test.title} ==`];
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
