// The model-based probe's sequences come from the grade's seed alone: the same seed always
// draws the same client options and operations (so a learner can replay a report), and
// different seeds draw different ones.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runArbitrary } from "../../labs/33-mcp-lite/probes/model/run.ts";

// The runs one seed draws, as text: options and operations of each.
function drawn(seed: number): string[] {
  return fc.sample(runArbitrary(12), { seed, numRuns: 6 }).map(([config, split, commands]) => `${JSON.stringify(config)} ${JSON.stringify(split)} ${[...commands].map(String).join(" ; ")}`);
}

describe("the model probe's sequences", () => {
  it("are the same for the same seed", () => {
    expect(drawn(7)).toEqual(drawn(7));
    expect(drawn(7).join("\n")).toContain("callTool(");
  });

  it("differ between seeds", () => {
    expect(drawn(7)).not.toEqual(drawn(8));
  });
});
