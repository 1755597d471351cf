// Every shell command a lesson shows is run, so none rots. Commands live in ```bash blocks,
// one per line (a trailing "\" continues a line; "#" lines are comments). An optional
// comment right above a block says what to expect from each of its commands:
//   <!-- run: exit=1 timeout=120 contains="6 passed" -->
// Defaults: exit=0, timeout=120 (seconds), no output check.
//
// Commands run from the repository root with LAB33_LESSON_RUN=1 in their environment, so
// `npm run verify:lesson` inside a lesson knows not to run the lesson's commands again.

import { spawn } from "node:child_process";

export const LESSON_RUN_ENV = "LAB33_LESSON_RUN";

export interface LessonCommand {
  command: string;
  /** 1-based line in the lesson. */
  line: number;
  exit: number[];
  timeoutMs: number;
  contains: string | undefined;
}

const RUN = /^<!--\s*run:(.*)-->\s*$/;

// Reads the bash blocks of a lesson and the expectation attached to each.
export function extractCommands(markdown: string): LessonCommand[] {
  const lines = markdown.split("\n");
  const commands: LessonCommand[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== "```bash") continue;
    let j = i - 1;
    while (j >= 0 && lines[j]!.trim() === "") j--;
    const expectation = parseRun(j >= 0 ? lines[j]! : "");
    let k = i + 1;
    let pending = "";
    let pendingLine = 0;
    for (; k < lines.length && !lines[k]!.startsWith("```"); k++) {
      const text = lines[k]!.trim();
      if (pending === "" && (text === "" || text.startsWith("#"))) continue;
      if (pending === "") pendingLine = k + 1;
      if (text.endsWith("\\")) {
        pending += `${text.slice(0, -1)} `;
        continue;
      }
      commands.push({ command: pending + text, line: pendingLine, ...expectation });
      pending = "";
    }
    i = k;
  }
  return commands;
}

function parseRun(line: string): Omit<LessonCommand, "command" | "line"> {
  const result = { exit: [0], timeoutMs: 120_000, contains: undefined as string | undefined };
  const match = RUN.exec(line.trim());
  if (!match) return result;
  for (const [, key, quoted, bare] of match[1]!.matchAll(/(\w+)=(?:"([^"]*)"|(\S+))/g)) {
    const value = quoted ?? bare ?? "";
    if (key === "exit") result.exit = value.split(",").map(Number);
    else if (key === "timeout") result.timeoutMs = Number(value) * 1000;
    else if (key === "contains") result.contains = value;
  }
  return result;
}

export interface CommandOutcome {
  command: LessonCommand;
  exitCode: number | null;
  timedOut: boolean;
  output: string;
  elapsedMs: number;
  ok: boolean;
  problem: string | undefined;
}

/** Strips terminal colour codes, so expectations match what a reader sees. */
export function plain(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}

// Runs one command in its own process group, killed whole at the deadline.
export function runCommand(command: LessonCommand, cwd: string): Promise<CommandOutcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("bash", ["-o", "pipefail", "-c", command.command], {
      cwd,
      env: { ...process.env, [LESSON_RUN_ENV]: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: process.platform !== "win32",
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, command.timeoutMs);
    child.once("close", (exitCode) => {
      clearTimeout(timer);
      const text = plain(output);
      let problem: string | undefined;
      if (timedOut) problem = `timed out after ${command.timeoutMs / 1000} s`;
      else if (!command.exit.includes(exitCode ?? -1)) problem = `exit status ${exitCode}, expected ${command.exit.join(" or ")}`;
      else if (command.contains !== undefined && !text.includes(command.contains)) problem = `output does not contain ${JSON.stringify(command.contains)}`;
      resolve({ command, exitCode, timedOut, output: text, elapsedMs: Date.now() - started, ok: problem === undefined, problem });
    });
  });
}
