// 给定文件（GIVEN）：与参考答案相同，不需要修改，也没有 TODO。直接 import 使用即可。
// Given file: the same as the reference solution's; nothing to do here.
// The one error runProcess rejects with: a stable code saying *why* the run ended, plus
// what the program had written by then (bounded) and how it ended.

export type ProcessErrorCode =
  | "INVALID_ARGUMENT" // bad executable, args or option; raised before anything is spawned
  | "SPAWN_FAILED" // the executable is missing or not executable; `cause` is the spawn error
  | "TIMEOUT" // timeoutMs passed; the program was stopped
  | "ABORTED" // the caller's signal aborted (before the start: nothing was spawned)
  | "OUTPUT_LIMIT"; // stdout or stderr passed maxOutputBytes; the program was stopped

export interface PartialRun {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal: string | null;
}

export class ProcessError extends Error {
  readonly code: ProcessErrorCode;
  /** What the program wrote before it was stopped, and how it ended (absent when nothing ran). */
  readonly run?: PartialRun;

  constructor(code: ProcessErrorCode, message: string, details: { cause?: unknown; run?: PartialRun } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "ProcessError";
    this.code = code;
    if (details.run) this.run = details.run;
  }
}
