// @ts-check
// The benchmark's echo server: a minimal, fast MCP-lite stdio server in plain JavaScript (no
// imports beyond node built-ins), so that what the benchmark measures is the client, not the
// server. Every client under test talks to this same program.
//
// Usage: node bench/echo-server.mjs [--self-destruct-ms N]   (default 120000; 0 disables)
//
// Methods: initialize (answers with the protocol version it was asked for), ping, tools/list,
//   tools/call; notifications are read and ignored. No validation beyond what it needs.
// Tools (answers are MCP CallToolResult shapes, so the official SDK client accepts them):
//   echo   {value: string}   answers {content: [{type: "text", text: value}]}
//   length {value: string}   answers {content: [{type: "text", text: String(value.length)}]}; for big
//                            arguments, whose echo would exceed a client's line cap
//   flood  {bytes: number}   starts an answer line and writes `bytes` bytes of "x" with no newline,
//                            in 64 KiB chunks honouring backpressure, then stays silent (a hostile
//                            server); stops when stdout breaks
// Answers produced by one stdin chunk go out in one write. stdin end exits 0.

const CHUNK_BYTES = 64 * 1024;

const TOOLS = [
  { name: "echo", description: "Answers with its value.", inputSchema: stringValueSchema() },
  { name: "length", description: "Answers with the length of its value.", inputSchema: stringValueSchema() },
  {
    name: "flood",
    description: "Writes a line that never ends.",
    inputSchema: { type: "object", properties: { bytes: { type: "integer" } }, required: ["bytes"] },
  },
];

function stringValueSchema() {
  return { type: "object", properties: { value: { type: "string" } }, required: ["value"] };
}

const selfDestructIndex = process.argv.indexOf("--self-destruct-ms");
const selfDestructMs = selfDestructIndex === -1 ? 120_000 : Number(process.argv[selfDestructIndex + 1]);
// No bench server may outlive a run by accident.
if (selfDestructMs > 0) setTimeout(() => process.exit(99), selfDestructMs).unref();

let stdoutBroken = false;
let flooding = false;
process.stdout.on("error", () => {
  stdoutBroken = true;
});

/** @type {Buffer[]} */
let partial = [];
process.stdin.on("data", (/** @type {Buffer} */ chunk) => {
  /** @type {string[]} */
  const out = [];
  let start = 0;
  for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
    let line;
    if (partial.length === 0) {
      line = chunk.toString("utf8", start, nl);
    } else {
      partial.push(chunk.subarray(start, nl));
      line = Buffer.concat(partial).toString("utf8");
      partial = [];
    }
    start = nl + 1;
    if (line.length > 0) onLine(line, out);
  }
  if (start < chunk.length) partial.push(chunk.subarray(start));
  if (out.length > 0 && !stdoutBroken && !flooding) process.stdout.write(out.join(""));
});
process.stdin.on("end", () => process.exit(0));

// Handles one request line, pushing its answer (if any) onto `out`.
/** @param {string} line @param {string[]} out */
function onLine(line, out) {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    out.push(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } })}\n`);
    return;
  }
  if (msg?.id === undefined) return; // a notification
  const { id, method, params } = msg;
  switch (method) {
    case "initialize":
      return answer(out, id, {
        protocolVersion: typeof params?.protocolVersion === "string" ? params.protocolVersion : "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "bench-echo", version: "1.0.0" },
      });
    case "ping":
      return answer(out, id, {});
    case "tools/list":
      return answer(out, id, { tools: TOOLS });
    case "tools/call":
      return onToolCall(out, id, params?.name, params?.arguments ?? {});
    default:
      out.push(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } })}\n`);
  }
}

/** @param {string[]} out @param {unknown} id @param {string} name @param {Record<string, unknown>} args */
function onToolCall(out, id, name, args) {
  if (name === "echo") return answer(out, id, { content: [{ type: "text", text: args.value }] });
  if (name === "length") return answer(out, id, { content: [{ type: "text", text: String(String(args.value).length) }] });
  if (name === "flood") {
    flooding = true;
    void flood(id, Number(args.bytes));
    return;
  }
  out.push(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32602, message: `unknown tool ${name}` } })}\n`);
}

/** @param {string[]} out @param {unknown} id @param {unknown} result */
function answer(out, id, result) {
  out.push(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
}

// Writes the start of an answer and then `bytes` bytes with no newline, as fast as the reader takes them.
/** @param {unknown} id @param {number} bytes */
async function flood(id, bytes) {
  process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`);
  const chunk = Buffer.alloc(CHUNK_BYTES, 0x78);
  for (let left = bytes; left > 0 && !stdoutBroken; left -= CHUNK_BYTES) {
    const piece = left >= CHUNK_BYTES ? chunk : chunk.subarray(0, left);
    if (!process.stdout.write(piece)) await drained();
  }
}

// Resolves on the next 'drain', or when stdout errors or closes, so a dead reader never hangs the flood.
function drained() {
  return new Promise((resolve) => {
    const done = () => {
      process.stdout.off("drain", done).off("error", done).off("close", done);
      resolve(undefined);
    };
    process.stdout.on("drain", done).on("error", done).on("close", done);
  });
}
