// What the handshake sends and what it accepts back: the initialize params, the check
// of the server's answer (shape and protocol version), and the notice that ends it.

import { McpError } from "./errors.ts";
import { encodeLine } from "./framing.ts";
import { SUPPORTED_PROTOCOL_VERSIONS } from "./options.ts";
import { checkInitializeResult, type InitializeResult } from "./protocol.ts";

/** The notification that tells the server the handshake is complete. */
export const INITIALIZED_NOTICE = encodeLine({ jsonrpc: "2.0", method: "notifications/initialized" });

// The params of initialize: the newest version this client speaks, no capabilities, and
// the product's name and version (nothing about the user or the machine).
export function initializeParams(clientInfo: { name: string; version: string }): Record<string, unknown> {
  return { protocolVersion: SUPPORTED_PROTOCOL_VERSIONS[0], capabilities: {}, clientInfo };
}

// Accepts a well-formed initialize result in a version this client speaks; anything else
// fails the handshake with MCP_PROTOCOL_ERROR (no "probably compatible" guess).
export function acceptInitializeResult(result: unknown): InitializeResult {
  const reason = checkInitializeResult(result);
  if (reason) throw new McpError("MCP_PROTOCOL_ERROR", `handshake failed: ${reason}`, { phase: "handshake" });
  const init = result as InitializeResult;
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(init.protocolVersion)) {
    throw new McpError(
      "MCP_PROTOCOL_ERROR",
      `handshake failed: server offered protocol version ${JSON.stringify(init.protocolVersion)}; ` +
        `this client supports ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
      { phase: "handshake" },
    );
  }
  return init;
}
