import { describe, expect, it } from "vitest";
import { acceptInitializeResult, initializeParams, INITIALIZED_NOTICE } from "#submission/src/handshake.ts";
import { SUPPORTED_PROTOCOL_VERSIONS } from "#submission/src/options.ts";

const answer = (protocolVersion: unknown) => ({ protocolVersion, capabilities: {}, serverInfo: { name: "s", version: "1" } });

describe("handshake", () => {
  it("asks for the newest supported version with no capabilities and the client's product info", () => {
    expect(initializeParams({ name: "c", version: "2" })).toEqual({
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "c", version: "2" },
    });
    expect(SUPPORTED_PROTOCOL_VERSIONS[0]).toBe("2025-06-18");
  });

  it("ends with one notifications/initialized line", () => {
    expect(INITIALIZED_NOTICE).toBe('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  });

  it("accepts every supported version and returns the result itself", () => {
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      const result = answer(version);
      expect(acceptInitializeResult(result)).toBe(result);
    }
  });

  it("refuses a version it does not speak, naming both sides", () => {
    expect(() => acceptInitializeResult(answer("1999-01-01"))).toThrow(
      expect.objectContaining({
        code: "MCP_PROTOCOL_ERROR",
        phase: "handshake",
        message: 'handshake failed: server offered protocol version "1999-01-01"; this client supports 2025-06-18, 2025-03-26, 2024-11-05',
      }),
    );
  });

  it("refuses a malformed result with the reason the shape check gives", () => {
    expect(() => acceptInitializeResult({ protocolVersion: "2025-06-18" })).toThrow(
      expect.objectContaining({
        code: "MCP_PROTOCOL_ERROR",
        phase: "handshake",
        message: "handshake failed: initialize result has no capabilities object",
      }),
    );
  });
});
