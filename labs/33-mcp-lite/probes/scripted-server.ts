// A server whose answers a probe chooses, for shapes the fixture never sends (the line null,
// an error response whose error is null, an initialize result without serverInfo). It keeps the
// fixture's records in a fixture workspace (its pid in pids.txt, every line in log.jsonl as
// {"dir","msg"}, its stillness report in server-state), so the probes' harness, hang detector
// and cleanup treat it like the fixture. It answers every request with the result chosen for its method ({} otherwise;
// "tools/call:NAME" chooses for one tool), or, where the choice is { raw: [lines] }, writes
// those lines instead ("$ID" in them is the request's id; no lines: no answer); it exits when
// its stdin ends (or SIGTERM's default), and after 60 s whatever happens.

import { writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { McpClient } from "#submission/src/mcp-client.ts";
import { createFixtureWorkspace, relayCommand, type FixtureWorkspace } from "../../../fixtures/index.ts";
import { keepRecord, pooledRecord, registerProgram } from "../../../fixtures/pool.mjs";
import { HANG_MS, madeWithCleanup, SPARE_TIMEOUT_MS, timerSnapshot, type Harness } from "../tests/support.ts";

// Plain CommonJS, node built-ins only, written next to its settings in the workspace: a file
// and, like the fixture, paths with no space after it (--state, for the hang detectors), so a
// client that (wrongly) spawns through a shell runs this server as it runs the fixture, and
// only rubric/process sees the shell.
const SCRIPT = `
const fs = require("node:fs");
const { pidFile, logFile, stateFile, answers } = JSON.parse(fs.readFileSync(require("node:path").join(__dirname, "settings.json"), "utf8"));
fs.appendFileSync(pidFile, process.pid + "\\n");
const log = (dir, msg) => fs.appendFileSync(logFile, JSON.stringify({ dir, msg }) + "\\n");
// The fixture's stillness report (--state): it answers as it reads, so it is busy only between
// reading a chunk and the report that follows (a stale report shows it busier, never stiller).
const state = { busy: 0, in: 0, out: 0, err: 0, eof: false, signals: 0 };
const report = () => {
  try {
    fs.writeFileSync(stateFile + ".next", JSON.stringify(state));
    fs.renameSync(stateFile + ".next", stateFile);
  } catch {}
};
const write = (text) => {
  state.out += Buffer.byteLength(text + "\\n");
  process.stdout.write(text + "\\n");
};
setTimeout(() => process.exit(99), 60000).unref();
const decoder = new (require("node:string_decoder").StringDecoder)("utf8");
let buffered = "";
process.stdin.on("data", (chunk) => {
  state.in += chunk.length;
  buffered += decoder.write(chunk);
  for (let at = buffered.indexOf("\\n"); at !== -1; at = buffered.indexOf("\\n")) {
    const line = buffered.slice(0, at);
    buffered = buffered.slice(at + 1);
    let msg;
    try { msg = JSON.parse(line); } catch { continue; }
    log("in", msg);
    if (msg.id === undefined) continue;
    const key = msg.method === "tools/call" && Object.hasOwn(answers, "tools/call:" + msg.params?.name) ? "tools/call:" + msg.params.name : msg.method;
    const raw = answers[key]?.raw;
    if (Array.isArray(raw)) {
      for (const text of raw.map((t) => t.replaceAll("$ID", JSON.stringify(msg.id)))) {
        let parsed = text;
        try { parsed = JSON.parse(text); } catch {}
        log("out", parsed);
        write(text);
      }
      continue;
    }
    const out = { jsonrpc: "2.0", id: msg.id, result: Object.hasOwn(answers, key) ? answers[key] : {} };
    log("out", out);
    write(JSON.stringify(out));
  }
  report();
});
process.stdin.on("end", () => {
  state.eof = true;
  report();
  process.exit(0);
});
report();
`;

const SCRIPT_NAME = "scripted-server.cjs";

// Where the fixture pool runs servers (fixtures/pool.mjs), it runs this one too: the same
// source, from this module (never the copy in the workspace, which the client's side could
// rewrite), with the session's process, its guarded node:fs and its tracked timers. Its
// settings come from the pool's own copy (keepRecord), not from the file: a file the client's
// host can reach is no record of what the probe asked for (a grader whose umask lets the
// payload's group write it, or a host that runs as the worker's own user where no other user
// is free).
registerProgram(
  "scripted",
  (program) => basename(program) === SCRIPT_NAME,
  (proc, timers, args) => {
    const require = (name: string) => {
      const module = proc.getBuiltinModule(name) as Record<string, unknown>;
      if (name !== "node:fs") return module;
      const readFileSync = (path: string, encoding: BufferEncoding) => pooledRecord(path) ?? (module.readFileSync as (p: string, e: BufferEncoding) => string)(path, encoding);
      return { ...module, readFileSync };
    };
    const run = new Function("require", "process", "__dirname", "setTimeout", SCRIPT) as (...a: unknown[]) => void;
    run(require, proc, dirname(args[0] ?? ""), timers.setTimeout);
  },
);

// Writes the scripted server and its settings into the workspace; returns the command that
// starts it. Each server reads the settings as it starts, so calling this again changes what
// the next server started there answers (the model's side steps use that, with no vitest hooks).
export function scriptedCommand(ws: FixtureWorkspace, answers: Record<string, unknown>): { executable: string; args: string[] } {
  // (Its stillness report where the fixture's goes, named on its command line as the fixture's
  // is, so the hang detectors read it as they read the fixture's.)
  const stateFile = join(ws.dir, "server-state");
  const settings = JSON.stringify({ pidFile: ws.pidFile, logFile: ws.logFile, stateFile, answers: { initialize: GOOD_INITIALIZE, ...answers } });
  const file = join(ws.dir, "settings.json");
  // (The pool's copy, which a pooled server reads; dropped with the workspace.)
  keepRecord(file, settings);
  // (For a server that is not pooled, which reads the file: 0640, whatever the umask.)
  writeFileSync(file, settings, { mode: 0o640 });
  const script = join(ws.dir, SCRIPT_NAME);
  writeFileSync(script, SCRIPT, { mode: 0o640 });
  const pooled = relayCommand(script, ["--state", stateFile], [ws.logFile]);
  return pooled ?? { executable: process.execPath, args: [script, "--state", stateFile] };
}

/** A valid initialize result, for scripts that change something else. */
export const GOOD_INITIALIZE = { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "scripted", version: "1.0.0" } };

// The client under test on a scripted server answering `answers` (method → result), with
// the probes' cleanup: close (bounded), then kill whatever the server recorded.
export function scripted(answers: Record<string, unknown>, options: Record<string, unknown> = {}): Harness<McpClient> {
  const timersBefore = timerSnapshot();
  const ws = createFixtureWorkspace("lab33-scripted-");
  const command = scriptedCommand(ws, answers);
  const client = madeWithCleanup(ws, () => new McpClient({ ...command, timeoutMs: SPARE_TIMEOUT_MS, ...options }), HANG_MS / 2);
  return { client, ws, command, timersBefore, pids: () => ws.pids(), log: () => ws.log() };
}
