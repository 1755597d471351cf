// The program every lesson 13 evidence test runs (through the runner under test):
//   node program.mjs --pid-file F <mode> [...]
// It appends its pid to F first, then, by mode:
//   args ...            prints JSON.stringify(its arguments after the mode) and exits 0
//   hello               prints "hello" to stdout and "note" to stderr, exits 3
//   flood BYTES         writes BYTES bytes of "x" to stdout, then exits 0
//   hang [--ignore-term] [--grandchild]
//                       never exits by itself; --ignore-term ignores SIGTERM; --grandchild
//                       first starts a child of its own (which records its pid too and hangs)
//   spawn-and-exit      starts a child of its own that inherits stdout and hangs, then exits 0
//   touch FILE          creates FILE, exits 0 (so a test can tell whether it ever ran)
// Every instance exits 99 on its own after 60 s, so none outlives a run by accident.
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const argv = process.argv.slice(2);
let pidFile = "";
if (argv[0] === "--pid-file") {
  pidFile = argv[1] ?? "";
  argv.splice(0, 2);
}
if (pidFile) appendFileSync(pidFile, `${process.pid}\n`);
setTimeout(() => process.exit(99), 60_000);

const [mode, ...rest] = argv;
if (mode === "args") {
  process.stdout.write(JSON.stringify(rest));
  process.exit(0);
} else if (mode === "hello") {
  process.stdout.write("hello");
  process.stderr.write("note");
  process.exitCode = 3;
  setImmediate(() => process.exit(3));
} else if (mode === "flood") {
  let left = Number(rest[0] ?? 1_000_000);
  const chunk = Buffer.alloc(64 * 1024, "x");
  const write = () => {
    while (left > 0) {
      const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= piece.length;
      if (!process.stdout.write(piece)) return void process.stdout.once("drain", write);
    }
    process.exit(0);
  };
  write();
} else if (mode === "hang") {
  if (rest.includes("--ignore-term")) process.on("SIGTERM", () => {});
  if (rest.includes("--grandchild")) {
    const self = fileURLToPath(import.meta.url);
    // Inherits stdout: it would hold the pipe open after its parent died.
    spawn(process.execPath, [self, "--pid-file", pidFile, "hang", ...(rest.includes("--ignore-term") ? ["--ignore-term"] : [])], { stdio: ["ignore", "inherit", "inherit"] });
  }
  process.stdout.write("started\n");
} else if (mode === "spawn-and-exit") {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [self, "--pid-file", pidFile, "hang"], { stdio: ["ignore", "inherit", "inherit"] });
  child.unref();
  // Exit once the child has recorded its pid, so the test knows both pids.
  const wait = () => {
    const text = pidFile ? readFileSync(pidFile, "utf8") : "";
    if (text.trim().split("\n").length >= 2) process.exit(0);
    else setTimeout(wait, 5);
  };
  wait();
} else if (mode === "touch") {
  writeFileSync(rest[0] ?? "touched", "ran\n");
  process.exit(0);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(64);
}
