// The grader's modules import one another without a cycle (type-only imports included), so
// each one can be read, and tested, on top of the ones below it: a madge-like walk of the
// relative imports and re-exports of every module under grader/.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { sourceModules } from "../size-limits.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const GRADER = join(ROOT, "grader");


// The grader modules one module imports or re-exports from (relative specifiers only).
export function importsOf(file: string, source: string): string[] {
  const specs = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+["'](\.{1,2}\/[^"']+)["']|\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)|(?:^|\n)\s*import\s+["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  return specs.map((spec) => resolve(dirname(file), spec)).filter((path) => path.startsWith(`${GRADER}/`) && existsSync(path));
}

// Every cycle found by a depth-first walk, each as the list of modules around it.
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

describe("the grader's imports", () => {
  const graph = new Map(sourceModules(GRADER).map((file) => [file, importsOf(file, readFileSync(file, "utf8"))]));

  it("are seen by the walk (type-only imports and re-exports included)", () => {
    const of = (name: string) => (graph.get(join(GRADER, name)) ?? []).map((p) => relative(GRADER, p));
    expect(of("grade.ts")).toContain("grade-folders.ts");
    expect(of("build-checks.ts")).toContain("result-types.ts");
    expect(of("grade-result.ts")).toContain("result-types.ts");
    // The walk finds a cycle where there is one.
    expect(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]]]))).toEqual([["a", "b", "c", "a"]]);
  });

  it("form no cycle", () => {
    expect(cycles(graph).map((cycle) => cycle.map((p) => relative(GRADER, p)).join(" → "))).toEqual([]);
  });
});
