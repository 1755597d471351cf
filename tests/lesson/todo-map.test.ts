// Every graded rule has a TODO, and what the learner reads about the TODOs is what the grader
// does: each graded test of lab 33 belongs to exactly one TODO, every rule of the contract is
// graded by tests that have one, the lesson's TODO tables are the manifest's, the starter's index
// names the manifest's checks, and the lab README lists the starter's real files.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CONTRACT_RULES, lab } from "../../labs/33-mcp-lite/lab.ts";
import { TEST_TITLES_ZH } from "../../labs/33-mcp-lite/test-titles.ts";
import type { GradeResult } from "../../grader/grade-result.ts";
import { cutSentences } from "../../lessons/tools/cut-sentences.ts";
import { ROOT } from "../../lessons/tools/snippets.ts";
import { TABLE_LESSONS, withTodoTables } from "../../lessons/tools/todo-table.ts";

const todos = lab.todos!;
const STARTER = join(ROOT, "labs", "33-mcp-lite", "starter", "src");
let graded: Array<{ check: string; test: string }> = [];
let everyTest: Array<{ check: string; test: string; label?: string }> = [];

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), "lab33-todo-map-"));
  try {
    const json = join(dir, "result.json");
    const tsx = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
    spawnSync(process.execPath, [tsx, join(ROOT, "grader", "cli.ts"), "--solution", "--json", json, "--format", "json", "--hang-ms", "8000", "--lang", "zh"], { cwd: ROOT, encoding: "utf8", timeout: 240_000 });
    const result = JSON.parse(readFileSync(json, "utf8")) as GradeResult;
    graded = result.checks.filter((c) => c.kind !== "homework").flatMap((c) => c.tests.map((t) => ({ check: c.id, test: t.title })));
    everyTest = result.checks.flatMap((c) => c.tests.map((t) => ({ check: c.id, test: t.title, ...(t.label ? { label: t.label } : {}) })));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);

// The TODOs whose tests claim a graded test, the longest title part first. A rule may cite a
// generated test by its entry in the probe's source ({ scenario: "oversized"): its title says
// "… on oversized: …".
function claimants(check: string, test: string): Array<{ tag: string; length: number }> {
  const scenario = /^\{ scenario: "([\w-]+)"/.exec(test)?.[1];
  const title = scenario ? (graded.find((g) => g.check === check && g.test.includes(` on ${scenario}: `))?.test ?? test) : test;
  return todos
    .flatMap((todo) => (todo.tests ?? []).filter((t) => t.check === check && title.includes(t.test)).map((t) => ({ tag: todo.tag, length: t.test.length })))
    .sort((a, b) => b.length - a.length);
}

describe("every graded test belongs to exactly one TODO", () => {
  it("the solution's grade lists the graded tests (the map is checked against real ones)", () => {
    expect(graded.length).toBeGreaterThan(30);
  });

  it("each graded test is claimed by one TODO, or by one most specific claim (the oversized line under framing)", () => {
    const problems: string[] = [];
    for (const { check, test } of graded) {
      const claims = claimants(check, test);
      if (claims.length === 0) problems.push(`${check} › ${test}: no TODO owns it`);
      else if (claims.length > 1 && claims[0]!.length === claims[1]!.length) problems.push(`${check} › ${test}: owned by ${claims.map((c) => c.tag).join(" and ")}`);
    }
    expect(problems).toEqual([]);
  });

  it("names no test that does not exist, and lists each owned test's check among the TODO's checks", () => {
    const problems: string[] = [];
    for (const todo of todos) {
      for (const own of todo.tests ?? []) {
        if (!everyTest.some((g) => g.check === own.check && g.test.includes(own.test))) problems.push(`${todo.tag}: no test "${own.test}" in ${own.check}`);
        if (!todo.checks.includes(own.check)) problems.push(`${todo.tag}: owns a test of ${own.check} but does not list the check`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("grades every rule of the contract with tests a graded TODO owns (MCP_BUSY and call input under TODO 1)", () => {
    const owner = (check: string, test: string) => claimants(check, test)[0]?.tag;
    const problems: string[] = [];
    for (const rule of CONTRACT_RULES) {
      if (rule.id === "option-max-stderr") continue; // graded by the bonus homework check only, as the manifest says
      for (const t of rule.tests) if (!owner(t.check, t.test)) problems.push(`${rule.id}: ${t.check} › ${t.test} has no TODO`);
    }
    expect(problems).toEqual([]);
    const first = todos[0]!.tag;
    for (const id of ["code-busy", "option-max-pending"]) expect([...new Set(CONTRACT_RULES.find((r) => r.id === id)!.tests.map((t) => owner(t.check, t.test)))]).toEqual([first]);
    const input = CONTRACT_RULES.find((r) => r.id === "code-invalid-argument")!.tests.find((t) => t.test.includes("bad input"))!;
    expect(owner(input.check, input.test)).toBe(first);
  });
});

describe("what the learner reads about the tests", () => {
  it("every test of a grade has a Chinese title, and every Chinese title names tests that exist", () => {
    expect(everyTest.length).toBeGreaterThan(60);
    expect(everyTest.filter((t) => !t.label).map((t) => `${t.check} > ${t.test}`)).toEqual([]);
    const unused = Object.keys(TEST_TITLES_ZH).filter((key) => !everyTest.some((t) => t.test.startsWith(key)));
    expect(unused).toEqual([]);
    // Each title translated whole: no English part of a title carried into the Chinese label.
    expect(everyTest.filter((t) => !Object.hasOwn(TEST_TITLES_ZH, t.test)).map((t) => t.test)).toEqual([]);
  });
});

describe("what the learner reads about the TODOs", () => {
  it("the lessons' TODO tables are the ones the manifest generates (npx tsx lessons/tools/todo-table.ts --write)", () => {
    for (const { file, lang } of TABLE_LESSONS) {
      const text = readFileSync(join(ROOT, file), "utf8");
      expect(withTodoTables(text, lab, lang), file).toBe(text);
    }
  });

  it("the starter's index names, for each TODO, the checks the manifest charges to it", () => {
    const index = readFileSync(join(STARTER, "mcp-client.ts"), "utf8").split("\n\n")[0]!.replace(/^\/\/ ?/gm, "");
    const rows = [...index.matchAll(/^\s*(\d+)\s+(\S.*?)\s{2,}§\S+\s+(.+)$/gm)].map((m) => ({ n: Number(m[1]), tag: m[2]!.trim(), checks: m[3]!.trim() }));
    expect(rows.map((r) => r.tag)).toEqual(todos.map((t) => t.tag));
    rows.forEach((row, i) => expect(row.checks.split(/,\s*/), row.tag).toEqual(todos[i]!.checks));
  });

  it("the lab README lists the starter's files as they are: each file, given (GIVEN banner, no TODO) or yours (TODO markers)", () => {
    const real = readdirSync(STARTER).sort();
    for (const readme of ["README.md", "README.en.md"]) {
      const text = readFileSync(join(ROOT, "labs", "33-mcp-lite", readme), "utf8");
      const table = text.slice(text.indexOf("<!-- starter-files -->"), text.indexOf("<!-- /starter-files -->"));
      const rows = [...table.matchAll(/^\| `([\w.-]+)` \| (\S+) \|/gm)].map((m) => ({ file: m[1]!, given: m[2] === "给定" || m[2] === "given" }));
      expect(rows.map((r) => r.file).sort(), readme).toEqual(real);
      for (const { file, given } of rows) {
        const source = readFileSync(join(STARTER, file), "utf8");
        expect(/GIVEN/.test(source.split("\n")[0]!), `${readme}: ${file}`).toBe(given);
        expect(/TODO\((?!\$\{)/.test(source), `${readme}: ${file}`).toBe(!given);
      }
    }
  });

  it("no sentence of the workbook's learner texts is cut short (zh and en)", () => {
    const files = ["docs/quick-start.md", "labs/33-mcp-lite/README.md", "labs/33-mcp-lite/README.en.md", "lessons/33-mcp-lite/README.md", "lessons/33-mcp-lite/README.en.md", "lessons/13-process-boundary/README.md", "lessons/13-process-boundary/README.en.md"];
    const cuts = files.flatMap((file) => cutSentences(readFileSync(join(ROOT, file), "utf8")).map((c) => `${file}:${c.line}: ${c.text}`));
    expect(cuts).toEqual([]);
  });

  it("the cut-sentence finder finds the cuts a dropped line leaves, in both languages", () => {
    expect(cutSentences("参考实现让服务进程自成一个进程组，信号发给整个组；\n\n下一段。").map((c) => c.line)).toEqual([1]);
    expect(cutSentences("2. Do lesson 13 first: `npm run lab:starter -- --lab 13`,\n3. Read the lesson.").map((c) => c.line)).toEqual([1]);
    expect(cutSentences("It ends with the trace. environment and your copy at any stage.").length).toBe(1);
    expect(cutSentences("- 第一项；\n- 第二项。\n\n一句完整的话。\n\n```bash\nnpm test\n```")).toEqual([]);
  });
});
