// Evidence test: evidence/timeout. A program that never ends is stopped at timeoutMs, even
// one that ignores SIGTERM (SIGKILL after killGraceMs), and is gone when the promise settles.

import { describe, it } from "vitest";
import { say } from "../messages.ts";
import { expectCode, expectNothingLeft, rejection, workspace } from "../support.ts";
import { NODE, runProcess } from "./common.ts";

describe("evidence/timeout", () => {
  it("rejects with TIMEOUT, SIGKILLs a program that ignores SIGTERM, and leaves no process or timer", async () => {
    const ws = workspace();
    const hang = await rejection(runProcess(NODE, { args: ws.programArgs("hang"), timeoutMs: 200 }), say("永不结束的程序（200 ms）", "a program that never ends (200 ms)"));
    expectCode(hang, "TIMEOUT", say("永不结束的程序（200 ms）", "a program that never ends (200 ms)"));
    expectNothingLeft(ws, "TIMEOUT");

    const stubborn = await rejection(
      runProcess(NODE, { args: ws.programArgs("hang", "--ignore-term"), timeoutMs: 200, killGraceMs: 100 }),
      say("忽略 SIGTERM 的程序", "a program that ignores SIGTERM"),
    );
    expectCode(stubborn, "TIMEOUT", say("忽略 SIGTERM 的程序", "a program that ignores SIGTERM"));
    expectNothingLeft(ws, say("SIGKILL 兜底", "the SIGKILL fallback"));
  });
});
