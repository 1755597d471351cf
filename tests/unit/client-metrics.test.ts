import { describe, expect, it } from "vitest";
import { emptyMetrics } from "#submission/src/client-metrics.ts";

describe("emptyMetrics", () => {
  it("starts every counter at zero, nothing truncated, no exit seen", () => {
    expect(emptyMetrics()).toEqual({
      pending: 0,
      queuedWrites: 0,
      requests: 0,
      responses: 0,
      remoteErrors: 0,
      timeouts: 0,
      aborts: 0,
      busyRejections: 0,
      unknownResponses: 0,
      protocolFaults: 0,
      notifications: 0,
      ignoredNotifications: 0,
      serverRequests: 0,
      cancellationsSent: 0,
      spawns: 0,
      exits: 0,
      stderrTruncated: false,
      lastExit: null,
    });
  });

  it("hands out a fresh object each time", () => {
    const a = emptyMetrics();
    a.requests = 5;
    expect(emptyMetrics().requests).toBe(0);
  });
});
