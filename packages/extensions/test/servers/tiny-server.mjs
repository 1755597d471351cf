// @ts-check
// A tiny MCP-lite server for the package's tests, for what the shared fixture server does
// not do. stdout is protocol only; diagnostics go to stderr.
//
//   --mode drill     tools/call "never" is held forever; tools/call "attack" starts, at once,
//                    an endless stderr flood (256 KiB first, then more, each chunk carrying
//                    $DRILL_SECRET) and an endless stdout line with no newline. Neither ever
//                    stops on its own: only the client can bound them.
//   --mode no-ping   answers everything but ping, which is never answered.
//   --pid-file PATH  appends this process's pid to PATH at start.
// Exits 99 after 60 s whatever happens, so it can never outlive a test run by much.

import { appendFileSync } from "node:fs";
import { flag, onMessages } from "./server-io.mjs";

const mode = flag("--mode") ?? "drill";
const pidFile = flag("--pid-file");
if (pidFile) appendFileSync(pidFile, `${process.pid}\n`);
setTimeout(() => process.exit(99), 60_000).unref();

const CHUNK = 64 * 1024;
const secret = process.env.DRILL_SECRET ?? "no-secret";

/** @param {unknown} message */
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

// Writes chunks forever, waiting for 'drain' between them; stops only when the pipe breaks.
/** @param {NodeJS.WriteStream} stream @param {() => Buffer} next */
async function endless(stream, next, limit = Infinity) {
  let broken = false;
  stream.on("error", () => (broken = true));
  for (let written = 0; !broken && written < limit; ) {
    const chunk = next();
    written += chunk.length;
    if (!stream.write(chunk)) await new Promise((resolve) => stream.once("drain", resolve));
  }
}

function stderrChunk() {
  const line = `flood ${secret} `;
  return Buffer.from(line.repeat(Math.ceil(CHUNK / line.length)));
}

onMessages(handle);

/** @param {{ id?: number, method: string, params?: any }} message */
function handle(message) {
  const { id, method, params } = message;
  if (id === undefined) return; // notifications
  switch (method) {
    case "initialize":
      return send({
        jsonrpc: "2.0",
        id,
        result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "tiny", version: "1.0.0" } },
      });
    case "ping":
      if (mode !== "no-ping") send({ jsonrpc: "2.0", id, result: {} });
      return;
    case "tools/list":
      return send({ jsonrpc: "2.0", id, result: { tools: [{ name: "never", inputSchema: { type: "object" } }, { name: "attack", inputSchema: { type: "object" } }] } });
    case "tools/call":
      if (params.name === "attack") return void attack(id);
      return; // "never": held forever
    default:
      return send({ jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
}

/** @param {number} id */
async function attack(id) {
  await endless(process.stderr, stderrChunk, 256 * 1024);
  void endless(process.stderr, stderrChunk);
  process.stdout.write(`{"jsonrpc":"2.0","id":${id},"result":{"content":"`);
  const filler = Buffer.alloc(CHUNK, 0x78);
  void endless(process.stdout, () => filler);
}
