// The handshake's protocol version negotiation against the fixture server.

import { describe, expect, it } from "vitest";
import { failure, startClient } from "../support.ts";

describe("version negotiation", () => {
  it("refuses an unsupported protocol version, names both sides, and stops the child", async () => {
    const s = startClient({ scenarios: ["bad-version"] });
    const error = await failure(s.client.initialize());
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR", phase: "handshake" });
    expect(error.message).toContain("1999-01-01");
    expect(error.message).toContain("2025-06-18");
    expect(s.client.initialized).toBe(false);
    expect(s.client.pid).toBeUndefined();
    expect(s.alive()).toEqual([]);
    await s.client.close();
  });

  it("accepts an older version the server prefers when this client supports it", async () => {
    const s = startClient({ protocolVersions: ["2024-11-05"] });
    await expect(s.client.initialize()).resolves.toMatchObject({ protocolVersion: "2024-11-05" });
    await s.client.close();
  });
});
