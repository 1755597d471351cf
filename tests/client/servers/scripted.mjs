// A minimal MCP server whose answers come from its first argument, a JSON object mapping a
// method to the `result` to send (initialize and ping have sensible defaults); requests it
// has no answer for, or whose answer is null, are never answered. "before:<method>" and "after:<method>" give raw
// lines written in the same chunk as that answer. For the client's rarely reached paths.
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
  if (result === undefined || result === null) return;
  const raw = (/** @type {string} */ key) => (typeof script[key] === "string" ? `${script[key]}\n` : "");
  const answer = `${JSON.stringify({ jsonrpc: "2.0", id: message.id, result })}\n`;
  process.stdout.write(raw(`before:${message.method}`) + answer + raw(`after:${message.method}`));
});
lines.on("close", () => process.exit(0));
