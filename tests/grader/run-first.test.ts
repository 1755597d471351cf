// The grade's file order: the manifest's long files first, the rest as vitest ordered them.
import { describe, expect, it } from "vitest";
import { runFirstOrder } from "../../grader/run-first.ts";

const spec = (moduleId: string) => ({ moduleId });

describe("runFirstOrder", () => {
  it("moves the named files to the front in the named order and keeps the others' order", () => {
    const specs = ["/g/probes/a.test.ts", "/g/probes/model.test.ts", "/g/tests/b.test.ts", "/g/probes/c.test.ts"].map(spec);
    const order = runFirstOrder(specs, ["probes/c.test.ts", "probes/model.test.ts"]).map((s) => s.moduleId);
    expect(order).toEqual(["/g/probes/c.test.ts", "/g/probes/model.test.ts", "/g/probes/a.test.ts", "/g/tests/b.test.ts"]);
  });

  it("matches whole path segments only, and changes nothing without names", () => {
    const specs = ["/g/probes/xmodel.test.ts", "/g/probes/model.test.ts"].map(spec);
    expect(runFirstOrder(specs, ["model.test.ts"]).map((s) => s.moduleId)).toEqual(["/g/probes/model.test.ts", "/g/probes/xmodel.test.ts"]);
    expect(runFirstOrder(specs, []).map((s) => s.moduleId)).toEqual(["/g/probes/xmodel.test.ts", "/g/probes/model.test.ts"]);
  });
});
