// The model-based probe's sequences come from the grade's seed alone: the same seed always
// draws the same client options and operations, and the same split answer for the tour (so a
// learner can replay a report), and different seeds draw different ones.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runArbitrary, TOUR, tourSplit } from "../../labs/33-mcp-lite/probes/model/run.ts";

// What one seed draws, as text: the tour, then the options and operations of each drawn run.
function drawn(seed: number): string[] {
  const tour = TOUR(tourSplit(seed)).map(String).join(" ; ");
  const runs = fc.sample(runArbitrary(12), { seed, numRuns: 6 }).map(([config, commands]) => `${JSON.stringify(config)} ${[...commands].map(String).join(" ; ")}`);
  return [tour, ...runs];
}

describe("the model probe's sequences", () => {
  it("are the same for the same seed", () => {
    expect(drawn(7)).toEqual(drawn(7));
    expect(drawn(7).slice(1).join("\n")).toContain("callTool(");
  });

  it("differ between seeds, in the tour's split answer and in the drawn runs", () => {
    expect(drawn(7)[0]).not.toEqual(drawn(8)[0]);
    expect(drawn(7).slice(1)).not.toEqual(drawn(8).slice(1));
  });
});
