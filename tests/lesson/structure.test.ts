// The lesson covers every part the course requires, its anchors are the ones the grader's
// hints point to, and its commands are found the way the command runner reads them.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extractCommands } from "../../lessons/tools/commands.ts";
import { ROOT } from "../../lessons/tools/snippets.ts";
import { REQUIRED_ANCHORS, anchorsOf } from "../../lessons/tools/requirements.ts";

const LESSON = readFileSync(join(ROOT, "lessons", "33-mcp-lite", "README.md"), "utf8");

describe("lesson structure", () => {
  it("has an anchor for every required part, a sequence diagram and the rubric table", () => {
    const anchors = anchorsOf(LESSON);
    expect(REQUIRED_ANCHORS.filter((a) => !anchors.has(a))).toEqual([]);
    expect(LESSON).toContain("```mermaid");
    expect(LESSON).toContain("sequenceDiagram");
    for (const id of ["rubric/id-matching", "rubric/lifecycle", "rubric/process", "rubric/handshake", "probe/orphans"]) expect(LESSON).toContain(id);
  });

  it("has the same section anchors in the English companion, and no commands there to rot", () => {
    const en = readFileSync(join(ROOT, "lessons", "33-mcp-lite", "README.en.md"), "utf8");
    expect([...anchorsOf(LESSON)].filter((a) => !anchorsOf(en).has(a))).toEqual([]);
    expect(extractCommands(en)).toEqual([]);
  });

  it("has every section the lab manifest's hints point to", async () => {
    const { lab } = await import("../../labs/33-mcp-lite/lab.ts");
    const anchors = anchorsOf(LESSON);
    const pointed = lab.checks
      .map((c: { lesson: string }) => c.lesson)
      .filter((l: string) => l.startsWith("lessons/33-mcp-lite/README.md#"))
      .map((l: string) => l.split("#")[1]!);
    expect(pointed.length).toBeGreaterThan(0);
    expect(pointed.filter((a: string) => !anchors.has(a))).toEqual([]);
  });

  it("shows the lab, grading, demo and verify commands, each with its expected exit status", () => {
    const commands = extractCommands(LESSON);
    const byText = new Map(commands.map((c) => [c.command, c]));
    expect(byText.get("npm run lab:starter")?.exit).toEqual([1]);
    expect(byText.get("npm run lab:solution")?.exit).toEqual([0]);
    expect(byText.get("npm run grade")?.exit).toEqual([1]);
    expect(byText.get("npm run grade -- --solution")?.exit).toEqual([0]);
    expect(byText.get("npm run verify:lesson -- 33")?.exit).toEqual([0]);
    for (const demo of ["swap", "leak", "crash"]) expect(byText.has(`npm run demo -- ${demo}`)).toBe(true);
  });
});

describe("extractCommands", () => {
  it("reads one command per line, joins continued lines, skips comments, and applies the run comment", () => {
    const md = [
      "<!-- run: exit=1,2 timeout=5 contains=\"done here\" -->",
      "```bash",
      "# a comment",
      "echo one",
      "echo two \\",
      "  three",
      "```",
      "```bash",
      "true",
      "```",
      "```sh",
      "not-a-lesson-command",
      "```",
    ].join("\n");
    expect(extractCommands(md)).toEqual([
      { command: "echo one", line: 4, exit: [1, 2], timeoutMs: 5_000, contains: "done here" },
      { command: "echo two  three", line: 5, exit: [1, 2], timeoutMs: 5_000, contains: "done here" },
      { command: "true", line: 9, exit: [0], timeoutMs: 120_000, contains: undefined },
    ]);
  });
});
