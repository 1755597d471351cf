// Size limits of the package, the same as the reference client's: no module over ~300
// lines, no function or method over ~50 (tests/size-limits.ts finds the functions).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { longFunctions, MAX_MODULE_LINES } from "../../../tests/size-limits.ts";

const SRC = join(import.meta.dirname, "..", "src");
const modules = readdirSync(SRC).filter((f) => f.endsWith(".ts"));

describe("the package's size limits", () => {
  it("measures every module, the manager included", () => {
    expect(modules).toEqual(expect.arrayContaining(["manager.ts", "server-manager.ts", "tool-adapter.ts", "tool-schema.ts"]));
  });

  it.each(modules)("%s has at most ~300 lines", (module) => {
    expect(readFileSync(join(SRC, module), "utf8").split("\n").length).toBeLessThanOrEqual(MAX_MODULE_LINES);
  });

  it("has no function or method over ~50 lines", () => {
    expect(modules.flatMap((module) => longFunctions(module, readFileSync(join(SRC, module), "utf8")))).toEqual([]);
  });
});
