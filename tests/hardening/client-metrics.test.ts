// The client's observability counters after real calls.

import { describe, expect, it } from "vitest";
import { failure, startClient } from "../support.ts";

describe("observability counters", () => {
  it("counts requests, outcomes and the exit reason without recording arguments or results", async () => {
    const s = startClient({ scenarios: ["duplicate-id"] });
    await s.client.initialize();
    const secret = "sk-should-never-appear";
    await s.client.callTool("echo", { value: secret });
    await failure(s.client.callTool("fail", { message: secret }));
    await failure(s.client.callTool("never", {}, { timeoutMs: 30 }));
    const controller = new AbortController();
    const aborted = s.client.callTool("never", {}, { signal: controller.signal });
    controller.abort();
    await failure(aborted);
    await s.client.callTool("echo", { value: "sync" });
    const metrics = s.client.metrics;
    expect(metrics).toMatchObject({
      pending: 0,
      requests: 6, // initialize, echo, fail, never, never, echo
      responses: 3,
      remoteErrors: 1,
      timeouts: 1,
      aborts: 1,
      protocolFaults: 0,
      spawns: 1,
    });
    expect(metrics.unknownResponses).toBeGreaterThanOrEqual(1);
    await s.client.close();
    expect(s.client.metrics.lastExit).toMatchObject({ expected: true });
    expect(JSON.stringify(s.client.metrics)).not.toContain(secret);
  });
});
