import { describe, expect, it } from "vitest";
import { emptyMetrics } from "#submission/src/client-metrics.ts";

describe("emptyMetrics", () => {
  it("starts every counter at zero, nothing truncated, no exit seen", () => {
    const { stderrTruncated, lastExit, ...counters } = emptyMetrics();
    expect(stderrTruncated).toBe(false);
    expect(lastExit).toBeNull();
    // The counters the client's tests read, among others; every one of them starts at zero.
    expect(Object.keys(counters)).toEqual(expect.arrayContaining(["pending", "requests", "responses", "timeouts", "spawns", "exits"]));
    for (const [name, value] of Object.entries(counters)) expect(value, name).toBe(0);
  });

  it("hands out a fresh object each time", () => {
    const a = emptyMetrics();
    a.requests = 5;
    expect(emptyMetrics().requests).toBe(0);
  });
});
