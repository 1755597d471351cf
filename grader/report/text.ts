// The terminal report, in the rubric's shape: one line per check with its dimension, pass
// standard and common deduction, then why each failed check failed and what to reread;
// at the end the first failing test's wire trace and the progress by TODO with the next step.
// Paths of the grader's private copy are shown as the learner's own files.

import { printable } from "./printable.ts";
import type { Lang } from "../manifest.ts";
import type { GradeResult } from "../grade-result.ts";
import { lessonLink, mapPaths, renderProgress, renderTrace } from "./progress.ts";

const words = {
  zh: {
    title: "评分报告",
    status: { pass: "通过", fail: "未通过", error: "无法评分" },
    score: "得分",
    seed: "随机种子（用 --seed 复现）",
    bonus: "课后作业加分",
    standard: "通过标准",
    deduction: "常见扣分",
    why: "原因",
    hint: "提示",
    read: "重读",
    failedTests: "失败的测试",
    todo: "待办",
    error: "无法评分",
    groups: { evidence: "证据测试", rubric: "验收 Rubric", probe: "探针", homework: "课后作业（加分，不影响结果）" },
  },
  en: {
    title: "Grade report",
    status: { pass: "PASS", fail: "FAIL", error: "ERROR" },
    score: "Score",
    seed: "Seed (reproduce with --seed)",
    bonus: "Homework bonus",
    standard: "pass standard",
    deduction: "common deduction",
    why: "why",
    hint: "hint",
    read: "reread",
    failedTests: "failed tests",
    todo: "TODO",
    error: "could not grade",
    groups: { evidence: "Evidence tests", rubric: "Rubric", probe: "Probes", homework: "Homework (bonus; never changes the status)" },
  },
} as const;

const mark = { pass: "✔", fail: "✘", error: "!" } as const;

// The TODO each failing test is charged to, as "TODO(x) §7.10 lessons/…#close" (in the
// report's language), from the progress the grade computed.
function blameOf(result: GradeResult, lang: Lang): (check: string, test: string) => string | undefined {
  const todos = result.todos ?? [];
  return (check, test) => {
    const todo = todos.find((t) => t.charged?.some((c) => c.check === check && c.test === test));
    return todo && `TODO(${todo.label ?? todo.tag}) §${todo.section} ${lessonLink(todo.lesson, lang)}`;
  };
}

// English reports name a TODO by its English name, also inside the tests' messages.
function todoNames(result: GradeResult, lang: Lang): (text: string) => string {
  const renamed = (result.todos ?? []).filter((t) => t.label && t.label !== t.tag);
  if (lang !== "en" || renamed.length === 0) return (text) => text;
  return (text) => renamed.reduce((acc, t) => acc.split(`TODO(${t.tag})`).join(`TODO(${t.label})`), text);
}

export function renderText(result: GradeResult, lang: Lang = result.lang): string {
  const w = words[lang];
  const out: string[] = [];
  const names = todoNames(result, lang);
  const local = (text: string) => names(mapPaths(text, result.submission).replace(/ from at /g, " at "));
  const blame = blameOf(result, lang);
  out.push(`${w.title} · ${result.lab} · ${w.status[result.status]}`);
  out.push(`${w.score}: ${result.score}/${result.maxScore}${result.bonus.maxScore > 0 ? ` · ${w.bonus}: ${result.bonus.score}/${result.bonus.maxScore}` : ""}`);
  out.push(`${w.seed}: ${result.seed}`);
  if (result.status === "error" && result.message) out.push(`${w.error}: ${local(result.message)}`);
  for (const kind of ["evidence", "rubric", "probe", "homework"] as const) {
    const checks = result.checks.filter((c) => c.kind === kind);
    if (checks.length === 0) continue;
    out.push("", `== ${w.groups[kind]} ==`);
    for (const c of checks) {
      out.push(`${mark[c.status]} ${c.id}  ${c.title}  ${c.score}/${c.maxScore}`);
      if (kind === "rubric" || kind === "probe") out.push(`    ${w.standard}: ${c.standard} · ${w.deduction}: ${c.deduction}`);
      // A grade that could not run gives every check the same cause, printed once above.
      if (c.status !== "pass" && result.status !== "error") {
        const failed = c.tests.filter((x) => x.status === "fail");
        if (failed.length > 0 && c.status === "fail") {
          for (const test of failed) {
            out.push(`    - ${test.label ?? test.title}`, `      ${w.why}: ${local(test.message ?? "")}`);
            const todo = blame(c.id, test.title);
            if (todo) out.push(`      ${w.todo}: ${todo}`);
          }
        } else {
          out.push(`    ${w.why}: ${local(c.message)}`);
        }
        // Partial progress: the tests of this check that did pass.
        for (const test of c.tests.filter((x) => x.status === "pass")) out.push(`    ${mark.pass} ${test.label ?? test.title}`);
        if (c.hint) out.push(`    ${w.hint}: ${c.hint}`);
        if (c.lesson) out.push(`    ${w.read}: ${lessonLink(c.lesson, lang)}`);
      }
    }
  }
  const trace = renderTrace(result.checks, lang);
  if (trace.length > 0) out.push("", ...trace);
  if (result.todos && result.todos.length > 0 && result.status !== "error") out.push("", ...renderProgress(result.todos, lang));
  out.push("");
  return printable(out.join("\n"));
}
