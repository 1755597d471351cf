// @ts-check
// Import smoke test, run by the grader in its own process (inside the sandbox where there is
// one) before any test: `node --import tsx import-smoke.mjs <entry file> <hang ms> <export>...`,
// or `node --enable-source-maps import-smoke.mjs <bundle> ...` for the submission's host bundle.
// It installs the resolution guard (../sandbox/guard.mjs, strict: everything the submission
// imports must be inside its copy), imports the submission's entry module, waits for the
// event loop to turn once (a microtask loop at import starves it), and writes one JSON line
// to fd 3 (never stdout, which the submission can write to):
//   {"ok":true,"exports":{"McpClient":"class",...}}      the module loaded
//   {"ok":false,"kind":"threw","message","stack"}         the import threw
//   {"ok":false,"kind":"hung","frames":[{url,line,col}]}  still importing after <hang ms>:
//     a watchdog thread pauses the main thread through the inspector and records where it
//     is stuck (source-mapped back to the .ts line), then kills this process.
import { writeSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

const [entry = "", hangMs = "5000", ...names] = process.argv.slice(2);
const VERDICT_FD = 3;
const verdict = (/** @type {object} */ record) => writeSync(VERDICT_FD, JSON.stringify(record) + "\n");

const watchdog = String.raw`
const { parentPort, workerData } = require("node:worker_threads");
const { writeSync } = require("node:fs");
const inspector = require("node:inspector");
const { SourceMap } = require("node:module");
const session = new inspector.Session();
session.connectToMainThread();
// The inspector session alone does not keep this thread alive.
setInterval(() => {}, 60_000);
const maps = new Map();
const urls = new Map();
session.on("Debugger.scriptParsed", (m) => {
  if (m.params.sourceMapURL) maps.set(m.params.scriptId, m.params.sourceMapURL);
  urls.set(m.params.scriptId, m.params.url);
});
function place(frame) {
  let line = frame.location.lineNumber + 1;
  let col = frame.location.columnNumber + 1;
  let url = frame.url || urls.get(frame.location.scriptId) || "";
  const map = maps.get(frame.location.scriptId);
  if (map && map.startsWith("data:")) {
    try {
      const payload = JSON.parse(Buffer.from(map.slice(map.indexOf(",") + 1), "base64").toString("utf8"));
      const found = new SourceMap(payload).findEntry(frame.location.lineNumber, frame.location.columnNumber);
      if (found && typeof found.originalLine === "number") {
        line = found.originalLine + 1;
        col = found.originalColumn + 1;
        // (A bundle's map names its sources relative to the bundle: grader/host-bundle.ts.)
        if (found.originalSource) url = new URL(found.originalSource, url || undefined).href;
      }
    } catch {}
  }
  return { fn: frame.functionName, url, line, col };
}
session.post("Debugger.enable", () => {
  parentPort.postMessage("ready");
  setTimeout(() => {
    session.once("Debugger.paused", (m) => {
      const frames = m.params.callFrames.slice(0, 8).map(place);
      writeSync(3, JSON.stringify({ ok: false, kind: "hung", frames }) + "\n");
      process.kill(process.pid, "SIGKILL");
    });
    session.post("Debugger.pause");
  }, workerData.hangMs);
});
`;

const dog = new Worker(watchdog, { eval: true, workerData: { hangMs: Number(hangMs) } });
// The debugger must be enabled while this thread is still idle: a busy thread never
// processes the enable request (a pause request, though, interrupts a busy loop).
await new Promise((resolve, reject) => {
  dog.once("message", resolve);
  dog.once("error", reject);
});
dog.unref();

// A top-level await that never settles leaves nothing to run (node would exit with 13):
// report it as hung once the deadline passes.
const keepAlive = setTimeout(() => {
  verdict({ ok: false, kind: "hung", frames: [] });
  process.exit(0);
}, Number(hangMs) + 100);
if (process.env.LAB_CONFINE) await import("../sandbox/guard.mjs");
try {
  const mod = await import(pathToFileURL(entry).href);
  // The module's top level is done; a microtask loop it started would starve the event loop
  // (and every test's timers): only a full turn of the loop proves the import finished.
  await new Promise((resolve) => setImmediate(resolve));
  clearTimeout(keepAlive);
  /** @type {Record<string, string>} */
  const exports = {};
  for (const name of names) {
    const value = mod[name];
    exports[name] = value === undefined ? "missing" : typeof value === "function" && /^class[\s{]/.test(Function.prototype.toString.call(value)) ? "class" : typeof value;
  }
  verdict({ ok: true, exports });
} catch (error) {
  const e = /** @type {Error} */ (error);
  verdict({ ok: false, kind: "threw", message: String(e?.message ?? e), stack: String(e?.stack ?? "") });
}
// The submission may have left timers or handles; the verdict is written, so stop here.
process.exit(0);
