// Homework: protocol version negotiation. The client asks for its newest supported
// version; a server answering a version the client does not support is refused with
// MCP_PROTOCOL_ERROR naming both sides, and the child it started is stopped.

import { describe, it } from "vitest";
import { McpClient, SUPPORTED_PROTOCOL_VERSIONS } from "#submission/src/mcp-client.ts";
import { isAlive } from "../../../fixtures/index.ts";
import { check, expectCleanShutdown, expectCode, harness, initialize, rejection, startupRejection, within } from "../tests/support.ts";
import { hw } from "./messages.ts";

describe("homework/version-negotiation", () => {
  it("refuses an unsupported version, names both sides, and stops the child", async () => {
    const h = harness((command) => new McpClient({ ...command, timeoutMs: 10_000 }), { scenarios: ["bad-version"] });
    const error = await startupRejection(h, hw("lblInitVersionServer", { version: "1999-01-01" }));
    expectCode(error, "MCP_PROTOCOL_ERROR", hw("lblInitVersionServer", { version: "1999-01-01" }));
    const message = String(error.message);
    const ours = SUPPORTED_PROTOCOL_VERSIONS[0];
    check(message.includes("1999-01-01") && message.includes(String(ours)), hw("versionMessage", { server: "1999-01-01", client: ours, actual: message }));
    check(h.client.initialized === false, hw("versionMessage", { server: "1999-01-01", client: ours, actual: "initialized === true" }));
    const alive = h.pids().filter(isAlive);
    check(alive.length === 0, hw("versionChildAlive", { pids: alive.join(", ") }));
    await expectCleanShutdown(h, hw("whenVersionNegotiation"));
  });

  it("accepts an older version both sides support", async () => {
    const h = harness((command) => new McpClient({ ...command, timeoutMs: 10_000 }), { protocolVersions: ["2024-11-05"] });
    const init = await initialize(h, hw("lblInitVersionServer", { version: "2024-11-05" }));
    check(init?.protocolVersion === "2024-11-05", hw("versionOlder", { version: "2024-11-05", actual: init?.protocolVersion }));
    await expectCleanShutdown(h, hw("whenVersionNegotiation"));
  });
});
