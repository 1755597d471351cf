// @ts-check
// Import smoke test, run by the grader in its own process (with tsx's loader) before any
// test: `node --import tsx import-smoke.mjs <entry file> <out file> <hang ms> <export>...`.
// It imports the submission's entry module and writes one JSON line to <out file> (never
// stdout, which the submission can write to):
//   {"ok":true,"exports":{"McpClient":"class",...}}      the module loaded
//   {"ok":false,"kind":"threw","message","stack"}         the import threw
//   {"ok":false,"kind":"hung","frames":[{url,line,col}]}  still importing after <hang ms>:
//     a watchdog thread pauses the main thread through the inspector and records where it
//     is stuck (source-mapped back to the .ts line), then kills this process.
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

const [entry = "", outFile = "", hangMs = "5000", ...names] = process.argv.slice(2);

const watchdog = String.raw`
const { parentPort, workerData } = require("node:worker_threads");
const { writeFileSync } = require("node:fs");
const inspector = require("node:inspector");
const { SourceMap } = require("node:module");
const session = new inspector.Session();
session.connectToMainThread();
// The inspector session alone does not keep this thread alive.
setInterval(() => {}, 60_000);
const maps = new Map();
session.on("Debugger.scriptParsed", (m) => {
  if (m.params.sourceMapURL) maps.set(m.params.scriptId, m.params.sourceMapURL);
});
function place(frame) {
  let line = frame.location.lineNumber + 1;
  let col = frame.location.columnNumber + 1;
  let url = frame.url;
  const map = maps.get(frame.location.scriptId);
  if (map && map.startsWith("data:")) {
    try {
      const payload = JSON.parse(Buffer.from(map.slice(map.indexOf(",") + 1), "base64").toString("utf8"));
      const found = new SourceMap(payload).findEntry(frame.location.lineNumber, frame.location.columnNumber);
      if (found && typeof found.originalLine === "number") {
        line = found.originalLine + 1;
        col = found.originalColumn + 1;
        url = found.originalSource || url;
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
      writeFileSync(workerData.outFile, JSON.stringify({ ok: false, kind: "hung", frames }) + "\n");
      process.kill(process.pid, "SIGKILL");
    });
    session.post("Debugger.pause");
  }, workerData.hangMs);
});
`;

const dog = new Worker(watchdog, { eval: true, workerData: { outFile, hangMs: Number(hangMs) } });
// The debugger must be enabled while this thread is still idle: a busy thread never
// processes the enable request (a pause request, though, interrupts a busy loop).
await new Promise((resolve, reject) => {
  dog.once("message", resolve);
  dog.once("error", reject);
});
dog.unref();

try {
  const mod = await import(pathToFileURL(entry).href);
  /** @type {Record<string, string>} */
  const exports = {};
  for (const name of names) {
    const value = mod[name];
    exports[name] = value === undefined ? "missing" : typeof value === "function" && /^class[\s{]/.test(Function.prototype.toString.call(value)) ? "class" : typeof value;
  }
  writeFileSync(outFile, JSON.stringify({ ok: true, exports }) + "\n");
} catch (error) {
  const e = /** @type {Error} */ (error);
  writeFileSync(outFile, JSON.stringify({ ok: false, kind: "threw", message: String(e?.message ?? e), stack: String(e?.stack ?? "") }) + "\n");
}
// The submission may have left timers or handles; the verdict is written, so stop here.
process.exit(0);
