// @ts-check
// A tiny server for one hardening test: it declares only the tools capability, then sends
// notifications it never negotiated (a log message, tools/list_changed, progress for a
// token nobody issued) before each tools/call answer. Exits when stdin ends.
let buffered = "";
const send = (/** @type {unknown} */ msg) => process.stdout.write(`${JSON.stringify(msg)}\n`);
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf("\n")) !== -1) {
    const msg = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    if (msg.method === "initialize") {
      send({
        jsonrpc: "2.0",
        id: msg.id,
        result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "unnegotiated", version: "0" } },
      });
    } else if (msg.method === "tools/call") {
      send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "not negotiated" } });
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "nobody-issued-this", progress: 1 } });
      send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: msg.id, progress: 1 } });
      send({ jsonrpc: "2.0", id: msg.id, result: { content: "done" } });
    }
  }
});
process.stdin.on("end", () => process.exit(0));
setTimeout(() => process.exit(99), 60_000).unref();
