// A minimal MCP server whose answers come from its first argument, a JSON object mapping a
// method to the `result` to send (initialize and ping have sensible defaults). Requests it
// has no answer for are never answered. For the client's rarely reached paths.
import { createInterface } from "node:readline";

/** @type {Record<string, unknown>} */
const script = JSON.parse(process.argv[2] ?? "{}");
/** @type {Record<string, unknown>} */
const defaults = {
  initialize: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "scripted", version: "1" } },
  ping: {},
};
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const result = message.method in script ? script[message.method] : defaults[message.method];
  if (result !== undefined) process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: message.id, result })}\n`);
});
lines.on("close", () => process.exit(0));
