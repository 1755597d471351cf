// The lesson's TODO tables come from the lab manifest, so they cannot drift from what the
// grader charges: which TODO owns which graded checks, and which TODOs each graded check needs.
// A lesson marks the generated part with
//   <!-- todo-table -->   ...   <!-- /todo-table -->
// `npx tsx lessons/tools/todo-table.ts [--write]` checks (or refreshes) both lessons of lab 33.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { LabManifest, TodoDef } from "../../grader/manifest.ts";
import { ROOT } from "./snippets.ts";

type Lang = "zh" | "en";

const OPEN = "<!-- todo-table -->";
const CLOSE = "<!-- /todo-table -->";

const WORDS = {
  zh: {
    todoHead: "| # | 待办 | 要做的事 | 章节 | 评分检查（有失败就记在这一项上） |\n| --- | --- | --- | --- | --- |",
    checkHead: "| 评分检查 | 需要做完的待办 |\n| --- | --- |",
    footnote: "另外：每项证据测试的收尾都要 `close()` 做对（待办 7）；测试写着“需要先完成 TODO(x)”时，它还需要 x。",
    homework: "作业加分",
    none: "—",
    tests: (n: number) => `（${n} 项测试）`,
    sep: "、",
  },
  en: {
    todoHead: "| # | TODO | What to do | Section | Grader checks (a failure there is charged to this TODO) |\n| --- | --- | --- | --- | --- |",
    checkHead: "| Grader check | TODOs it needs done |\n| --- | --- |",
    footnote: "Besides: every evidence test ends with a `close()` that must work (TODO 7); a test that says \"needs TODO(x) first\" needs x as well.",
    homework: "homework bonus",
    none: "—",
    tests: (n: number) => ` (${n} tests)`,
    sep: ", ",
  },
} as const;

// "7.1–7.4" → "[7.1–7.4](#pending-record)": the section number linked to its anchor.
function sectionLink(todo: TodoDef): string {
  const anchor = todo.lesson.split("#")[1];
  return anchor ? `[${todo.section}](#${anchor})` : todo.section;
}

// The checks a TODO is charged for, each with how many of its tests the TODO owns.
function ownedChecks(todo: TodoDef, lang: Lang): string {
  const counts = new Map<string, number>();
  for (const id of todo.checks) counts.set(id, 0);
  for (const t of todo.tests ?? []) counts.set(t.check, (counts.get(t.check) ?? 0) + 1);
  const items = [...counts].map(([id, n]) => `\`${id}\`${n > 1 ? WORDS[lang].tests(n) : ""}`);
  return items.length > 0 ? items.join(WORDS[lang].sep) : WORDS[lang].none;
}

// The generated Markdown: the TODO table, then the graded checks with the TODOs each needs.
export function renderTodoTables(lab: LabManifest, lang: Lang): string {
  const w = WORDS[lang];
  const todos = lab.todos ?? [];
  const tag = (todo: TodoDef) => (lang === "en" && todo.name ? `\`TODO(${todo.tag})\` (${todo.name})` : `\`TODO(${todo.tag})\``);
  const rows = todos.map((todo, i) => {
    const graded = todo.checks.some((id) => !id.startsWith("homework/"));
    const checks = graded ? ownedChecks(todo, lang) : `${w.homework}${lang === "en" ? ": " : "："}${ownedChecks(todo, lang)}`;
    return `| ${i + 1} | ${tag(todo)} | ${todo.title[lang]} | ${sectionLink(todo)} | ${checks} |`;
  });
  const needs = lab.checks
    .filter((c) => c.kind !== "homework")
    .map((c) => {
      const numbers = todos.flatMap((todo, i) => (todo.checks.includes(c.id) || (todo.tests ?? []).some((t) => t.check === c.id) ? [i + 1] : []));
      return `| \`${c.id}\` | ${numbers.map((n) => `${n}`).join(w.sep) || w.none} |`;
    });
  return [w.todoHead, ...rows, "", w.checkHead, ...needs, "", w.footnote].join("\n");
}

// The lesson with its generated part replaced, or a problem when the markers are missing.
export function withTodoTables(markdown: string, lab: LabManifest, lang: Lang): string | { problem: string } {
  const start = markdown.indexOf(OPEN);
  const end = markdown.indexOf(CLOSE);
  if (start < 0 || end < start) return { problem: `no ${OPEN} … ${CLOSE} block` };
  return `${markdown.slice(0, start + OPEN.length)}\n${renderTodoTables(lab, lang)}\n${markdown.slice(end)}`;
}

/** The lessons whose TODO tables come from lab 33's manifest. */
export const TABLE_LESSONS: Array<{ file: string; lang: Lang }> = [
  { file: "lessons/33-mcp-lite/README.md", lang: "zh" },
  { file: "lessons/33-mcp-lite/README.en.md", lang: "en" },
];

async function main(write: boolean): Promise<number> {
  const { lab } = (await import(pathToFileURL(join(ROOT, "labs", "33-mcp-lite", "lab.ts")).href)) as { lab: LabManifest };
  let stale = 0;
  for (const { file, lang } of TABLE_LESSONS) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const next = withTodoTables(text, lab, lang);
    if (typeof next !== "string") {
      console.error(`${file}: ${next.problem}`);
      stale++;
    } else if (next !== text) {
      if (write) writeFileSync(join(ROOT, file), next);
      else console.error(`${file}: the TODO tables are stale (npx tsx lessons/tools/todo-table.ts --write)`);
      stale += write ? 0 : 1;
    }
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main(process.argv.includes("--write"));
