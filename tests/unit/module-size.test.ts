// Size limits of the reference client, so it stays readable at a glance: no module over
// ~300 lines, no function or method over ~50 (tests/size-limits.ts finds the functions).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { functionLengths, longFunctions, MAX_MODULE_LINES } from "../size-limits.ts";

const SRC = join(import.meta.dirname, "..", "..", "labs", "33-mcp-lite", "solution", "src");

describe("the reference client's size limits", () => {
  const modules = readdirSync(SRC).filter((f) => f.endsWith(".ts"));

  it("finds the functions it measures (the checker itself works)", () => {
    const sample = ["export function f(a: number): number {", "  if (a) {", "    return 1;", "  }", "  return 2;", "}"].join("\n");
    expect(functionLengths(sample)).toEqual([{ name: "export function f(a: number): number {", line: 1, lines: 6 }]);
    const method = ["class C {", "  private async run(", "    x: string,", "  ): Promise<void> {", "    await x;", "  }", "}"].join("\n");
    expect(functionLengths(method).map((f) => f.lines)).toContain(5);
    expect(functionLengths(readFileSync(join(SRC, "mcp-client.ts"), "utf8")).length).toBeGreaterThan(20);
  });

  it.each(readdirSync(SRC).filter((f) => f.endsWith(".ts")))("%s has at most ~300 lines", (module) => {
    expect(readFileSync(join(SRC, module), "utf8").split("\n").length).toBeLessThanOrEqual(MAX_MODULE_LINES);
  });

  it("has no function or method over ~50 lines", () => {
    const long = modules.flatMap((module) => longFunctions(module, readFileSync(join(SRC, module), "utf8")));
    expect(long).toEqual([]);
  });
});
