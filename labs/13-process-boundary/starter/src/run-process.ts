// 第 13 课 starter：这是你要改的文件。它能编译，能跑完一个自己会结束的程序，错的地方正是本课要讲的。
// Lesson 13 starter: the file you change. English: lessons/13-process-boundary/README.en.md#lab
//
// errors.ts 是给定文件（GIVEN），不用改。
//
// 待办索引：按顺序做。每一项在代码里用 TODO 加括号里的标签标在要改的地方；做完一项就删掉那一项的
// 全部标记，`npm run grade -- --lab 13-process-boundary` 的报告据此给出下一步。
//
//   #  标签         课程章节  评分检查
//   1  no-shell     §4.1      evidence/no-shell
//      spawn(executable, args, { shell: false })：参数原样传递；executable 是程序，不是命令行。
//   2  output-cap   §4.2      evidence/output-cap
//      stdout、stderr 各自按字节计数，超过 maxOutputBytes 立即停止程序，以 OUTPUT_LIMIT 拒绝并带上已保留的输出。
//   3  timeout      §4.3      evidence/timeout
//      timeoutMs 到期：SIGTERM，killGraceMs 后 SIGKILL，等程序退出后以 TIMEOUT 拒绝；计时器一律清掉。
//   4  abort        §4.4      evidence/abort
//      已经 abort 的 signal：什么都不启动，直接 ABORTED；运行中 abort：同样的停止阶梯；任何结局都要摘监听器。
//   5  reap         §4.5      evidence/reaped, probe/orphans
//      程序自成进程组；它退出（或被停止）后结束组里剩下的进程，等整个组消失、管道排空（有上限）才 settle。

import { spawn } from "node:child_process";
import { ProcessError } from "./errors.ts";

export { ProcessError, type PartialRun, type ProcessErrorCode } from "./errors.ts";

/** Default deadline of one run, in ms. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default bytes kept of stdout and of stderr, each (1 MiB). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** Default grace between SIGTERM and SIGKILL when a run is stopped, in ms. */
export const DEFAULT_KILL_GRACE_MS = 1_000;
/** Longest wait for the rest of the program's group to disappear after it exited, in ms. */
export const GROUP_GONE_MS = 2_000;

export interface RunOptions {
  /** Arguments, each a string, passed verbatim (no shell, no splitting, no quoting). Default: []. */
  args?: string[];
  /** Working directory. Default: the caller's. */
  cwd?: string;
  /** Variables added on top of PATH (nothing else of process.env reaches the program). */
  env?: Record<string, string>;
  /** Deadline in ms; positive integer. Default: 10_000. */
  timeoutMs?: number;
  /** Bytes kept of stdout and of stderr, each; one byte more stops the run. Default: 1 MiB. */
  maxOutputBytes?: number;
  /** Grace in ms between SIGTERM and SIGKILL when the run is stopped. Default: 1_000. */
  killGraceMs?: number;
  /** Aborting it stops the run; already aborted, nothing is spawned. */
  signal?: AbortSignal;
}

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

// The anti-pattern: one command line for a shell, all output kept, no deadline, no way to
// cancel, and "done" means the pipes closed, whoever holds them.
export async function runProcess(executable: string, options: RunOptions = {}): Promise<RunResult> {
  const started = Date.now();
  // TODO(no-shell): the shell splits "two words", expands $(...) and runs "a;b" as two commands.
  const command = [executable, ...(options.args ?? [])].join(" ");
  // TODO(abort): an aborted signal must start nothing; a running program must be stopped.
  // TODO(reap): a process group of its own (detached), so stopping it reaches its children.
  const child = spawn(command, { shell: true, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise<RunResult>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    // TODO(output-cap): count bytes, stop the program past maxOutputBytes.
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // TODO(timeout): nothing ever stops a program that does not end.
    child.once("error", (error) => reject(new ProcessError("SPAWN_FAILED", String(error), { cause: error })));
    // TODO(reap): "close" waits for whoever holds the pipes, and nothing stops the rest of the group.
    child.once("close", (exitCode, signal) => resolve({ exitCode, signal, stdout, stderr, durationMs: Date.now() - started }));
  });
}
