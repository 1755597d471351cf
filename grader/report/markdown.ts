// --format markdown: the report for a GitHub job summary. The same content as the terminal
// report as tables, plus, for each failed evidence test, a Mermaid sequence diagram of the
// messages the fixture server really saw and sent, so the learner sees what went wrong.

import { printableLine } from "./printable.ts";
import type { Lang } from "../manifest.ts";
import type { GradeResult, TestOutcome, TraceEntry } from "../grade-result.ts";

/** Most messages drawn per diagram. */
export const MAX_DIAGRAM_MESSAGES = 40;

const words = {
  zh: {
    title: "评分报告", status: { pass: "✅ 通过", fail: "❌ 未通过", error: "⚠️ 无法评分" },
    score: "得分", seed: "随机种子", check: "检查项", result: "结果", points: "分数", why: "说明",
    hints: "提示", trace: "失败测试的真实消息序列", client: "客户端", server: "fixture 服务器",
    noTrace: "（这个测试没有留下消息记录）", more: "还有 {n} 条消息未画出", bonus: "课后作业加分",
  },
  en: {
    title: "Grade report", status: { pass: "✅ pass", fail: "❌ fail", error: "⚠️ could not grade" },
    score: "Score", seed: "Seed", check: "Check", result: "Result", points: "Points", why: "Details",
    hints: "Hints", trace: "What the failed tests really exchanged", client: "client", server: "fixture server",
    noTrace: "(this test left no message log)", more: "{n} more messages not drawn", bonus: "Homework bonus",
  },
} as const;

export function renderMarkdown(result: GradeResult, lang: Lang = result.lang): string {
  const w = words[lang];
  const out: string[] = [];
  out.push(`## ${w.title}: ${result.lab} — ${w.status[result.status]}`, "");
  out.push(`**${w.score}:** ${result.score}/${result.maxScore}` + (result.bonus.maxScore > 0 ? ` · **${w.bonus}:** ${result.bonus.score}/${result.bonus.maxScore}` : "") + ` · **${w.seed}:** \`${result.seed}\``, "");
  if (result.status === "error" && result.message) out.push(`> ${cell(result.message)}`, "");
  out.push(`| ${w.check} | ${w.result} | ${w.points} | ${w.why} |`, "|---|---|---|---|");
  for (const c of result.checks) out.push(`| \`${c.id}\` ${cell(c.title)} | ${w.status[c.status]} | ${c.score}/${c.maxScore} | ${cell(c.message, 300)} |`);
  const hinted = result.checks.filter((c) => c.status !== "pass" && c.hint);
  if (hinted.length > 0) {
    out.push("", `### ${w.hints}`, "");
    for (const c of hinted) out.push(`- **\`${c.id}\`** — ${c.hint}${c.lesson ? ` ([${c.lesson}](${c.lesson}))` : ""}`);
  }
  const failed = result.checks.filter((c) => c.kind === "evidence").flatMap((c) => c.tests.filter((x) => x.status === "fail").map((x) => ({ check: c.id, test: x })));
  if (failed.length > 0) {
    out.push("", `### ${w.trace}`);
    for (const { check, test } of failed) {
      out.push("", `#### \`${check}\` — ${cell(test.label ?? test.title)}`, "");
      out.push(test.trace && test.trace.length > 0 ? mermaid(test, lang) : w.noTrace);
    }
  }
  out.push("");
  return out.join("\n");
}

// One sequence diagram: "in" lines are what the client wrote, "out" lines what the server answered.
export function mermaid(test: TestOutcome, lang: Lang): string {
  const w = words[lang];
  const trace = test.trace ?? [];
  const lines = ["```mermaid", "sequenceDiagram", `  participant C as ${w.client}`, `  participant S as ${w.server}`];
  for (const entry of trace.slice(0, MAX_DIAGRAM_MESSAGES)) lines.push(`  ${arrow(entry)}`);
  if (trace.length > MAX_DIAGRAM_MESSAGES) lines.push(`  Note over C,S: ${label(w.more.replace("{n}", String(trace.length - MAX_DIAGRAM_MESSAGES)))}`);
  if (test.message) lines.push(`  Note over C: ${label(test.message, 120)}`);
  lines.push("```");
  return lines.join("\n");
}

function arrow(entry: TraceEntry): string {
  const m = (entry.msg ?? {}) as Record<string, any>;
  if (entry.dir === "in") {
    if ("raw" in m) return `C->>S: ${label(`raw ${String(m.raw)}`)}`;
    const id = m.id === undefined ? "" : `#${JSON.stringify(m.id)} `;
    const tool = m.method === "tools/call" ? ` ${m.params?.name ?? ""} ${short(m.params?.arguments)}` : "";
    return m.id === undefined ? `C-)S: ${label(`${m.method}${tool}`)}` : `C->>S: ${label(`${id}${m.method}${tool}`)}`;
  }
  if ("raw" in m) return `S-->>C: ${label(`raw ${String(m.raw)}`)}`;
  if (m.method) return `S--)C: ${label(`${m.id === undefined ? "" : `#${JSON.stringify(m.id)} `}${m.method}`)}`;
  const id = `#${JSON.stringify(m.id)}`;
  if (m.error) return `S-->>C: ${label(`${id} error ${m.error.code} ${m.error.message ?? ""}`)}`;
  return `S-->>C: ${label(`${id} result ${short(m.result)}`)}`;
}

function short(value: unknown, max = 40): string {
  if (value === undefined) return "";
  const text = JSON.stringify(value) ?? "";
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

// Mermaid message text: no newlines, no characters that end or break a statement.
function label(text: string, max = 90): string {
  const flat = printableLine(text.replace(/\s+/g, " ")).replace(/[;#]/g, (c) => (c === ";" ? "," : "＃")).replace(/"/g, "'").replace(/[<>]/g, (c) => (c === "<" ? "‹" : "›"));
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

// A table cell of text the submission may control: one line, shown as written (Markdown's
// punctuation escaped, HTML as text), never markup of its own.
function cell(text: string, max = 200): string {
  const flat = printableLine(text.replace(/\s+/g, " "));
  const short = flat.length > max ? `${flat.slice(0, max)}…` : flat;
  return short.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/[\\`*_[\]|!~#]/g, "\\$&");
}
