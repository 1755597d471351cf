// The PrairieLearn question's upload element, put through PrairieLearn's own rule for which
// uploaded files it keeps (prairielearn-upload.ts): the whole starter arrives, so does a
// finished client with modules of its own, junk is dropped, and a missing starter file is
// refused before grading with its name. The results file's homework entries stay out of the
// panel's points total.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../grader/grade.ts";
import { render } from "../../grader/report/index.ts";
import type { GradeResult } from "../../grader/grade-result.ts";
import { applyUpload, globRegex, uploadElement } from "./prairielearn-upload.ts";

const question = readFileSync(join(ROOT, "grader/platforms/prairielearn/question.html"), "utf8");
const element = uploadElement(question);
const starterFiles = readdirSync(join(ROOT, "labs/33-mcp-lite/starter/src")).sort();
const solutionFiles = readdirSync(join(ROOT, "labs/33-mcp-lite/solution/src")).sort();

describe("PrairieLearn's matching rule (as documented and implemented)", () => {
  it("takes one file per required pattern, any number per optional pattern, case-insensitively", () => {
    const upload = ["a.ts", "b.ts", "c.TS", "notes.md"];
    expect(applyUpload({ fileNames: [], filePatterns: ["*.ts"], optionalFileNames: [], optionalFilePatterns: [] }, upload).kept).toHaveLength(1);
    expect(applyUpload({ fileNames: [], filePatterns: ["*.ts", "*.ts"], optionalFileNames: [], optionalFilePatterns: [] }, upload).kept).toHaveLength(2);
    expect(applyUpload({ fileNames: [], filePatterns: [], optionalFileNames: [], optionalFilePatterns: ["*.ts"] }, upload).kept).toEqual(["a.ts", "b.ts", "c.TS"]);
    expect(globRegex("file[0-9].txt").test("file5.txt")).toBe(true);
    expect(globRegex("[!_]*.py").test("_foo.py")).toBe(false);
    expect(globRegex("solution?.txt").test("solution10.txt")).toBe(false);
  });

  it("shows why the old element lost files: file-patterns=\"*.ts\" kept one of the starter's nine", () => {
    const old = uploadElement('<pl-file-upload file-patterns="*.ts"></pl-file-upload>');
    expect(applyUpload(old, starterFiles).kept).toHaveLength(1);
  });
});

describe("PrairieLearn question (grader/platforms/prairielearn/question.html)", () => {
  it("requires the starter files the reference solution keeps too, and makes the rest and new modules optional", () => {
    expect(element.fileNames.slice().sort()).toEqual(starterFiles.filter((f) => solutionFiles.includes(f)));
    expect(element.fileNames).toContain("mcp-client.ts");
    expect(element.optionalFileNames.sort()).toEqual(starterFiles.filter((f) => !solutionFiles.includes(f)));
    expect(element.filePatterns).toEqual([]);
    expect(element.optionalFilePatterns).toEqual(["*.ts"]);
  });

  it("keeps every file of the starter's src/ when the learner uploads the folder's files", () => {
    expect(applyUpload(element, starterFiles)).toEqual({ kept: starterFiles, formatErrors: [] });
  });

  it("keeps a finished client with modules of its own and without todo.ts, and drops what is not TypeScript", () => {
    const upload = [...solutionFiles, ".DS_Store", "notes.md", "mcp-client.js"];
    expect(applyUpload(element, upload)).toEqual({ kept: solutionFiles, formatErrors: [] });
  });

  it("refuses an upload missing a starter file before grading, naming the file", () => {
    const outcome = applyUpload(element, starterFiles.filter((f) => f !== "errors.ts"));
    expect(outcome.formatErrors).toEqual(["The following required files were missing: errors.ts"]);
  });
});

describe("PrairieLearn results (--format prairielearn)", () => {
  const check = (id: string, kind: GradeResult["checks"][number]["kind"], score: number, maxScore: number): GradeResult["checks"][number] => ({
    id, kind, status: score === maxScore ? "pass" : "fail", score, maxScore, message: "m", title: id, standard: "", deduction: "", tests: [{ title: "t", status: score === maxScore ? "pass" : "fail" }],
  });
  const result = (lang: "zh" | "en"): GradeResult => ({
    version: 1, lab: "33-mcp-lite", status: "pass", score: 100, maxScore: 100, bonus: { score: 4, maxScore: 10 }, seed: 1, lang, submission: "", startedAt: "", durationMs: 1,
    checks: [check("evidence/happy-path", "evidence", 60, 60), check("rubric/process", "rubric", 40, 40), check("homework/stress-100", "homework", 2, 2), check("homework/notifications", "homework", 0, 2)],
  });

  it("lists homework at 0 of 0 points with the bonus in its message, so the panel totals 100/100 for full marks", () => {
    const pl = JSON.parse(render(result("en"), "prairielearn"));
    const points = pl.tests.reduce((sum: number, t: { points: number }) => sum + t.points, 0);
    const max = pl.tests.reduce((sum: number, t: { max_points: number }) => sum + t.max_points, 0);
    expect({ points, max, score: pl.score }).toEqual({ points: 100, max: 100, score: 1 });
    const homework = pl.tests.filter((t: { name: string }) => t.name.startsWith("homework/"));
    expect(homework.map((t: { points: number; max_points: number }) => [t.points, t.max_points])).toEqual([[0, 0], [0, 0]]);
    expect(homework[0].message).toMatch(/^bonus 2\/2 \(not part of the score\)/);
    expect(homework[1].message).toMatch(/^bonus 0\/2/);
    expect(pl.message).toContain("bonus 4/10");
    expect(JSON.parse(render(result("zh"), "prairielearn")).tests[2].message).toMatch(/^加分 2\/2/);
  });
});
