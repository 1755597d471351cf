// Size limits of the grader, so a newcomer can read each step at a glance: no module of
// grader/ over ~300 lines, no function or method over ~50 (tests/size-limits.ts finds them).
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { functionLengths, longFunctions, MAX_MODULE_LINES, sourceModules } from "../size-limits.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const GRADER = join(ROOT, "grader");


describe("the grader's size limits", () => {
  const files = sourceModules(GRADER).map((file) => relative(ROOT, file));

  it("measures the grader's modules and their functions (the checker sees them)", () => {
    expect(files).toContain("grader/grade.ts");
    expect(files).toContain("grader/sandbox/ns-init.mjs");
    expect(functionLengths(readFileSync(join(ROOT, "grader/test-records.ts"), "utf8")).length).toBeGreaterThan(10);
  });

  it.each(files)("%s has at most ~300 lines", (file) => {
    expect(readFileSync(join(ROOT, file), "utf8").split("\n").length).toBeLessThanOrEqual(MAX_MODULE_LINES);
  });

  it("has no function or method over ~50 lines", () => {
    expect(files.flatMap((file) => longFunctions(file, readFileSync(join(ROOT, file), "utf8")))).toEqual([]);
  });
});
