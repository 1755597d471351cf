// Evidence test: evidence/reaped. When the promise settles, the program and everything it
// started are gone: a grandchild holding stdout neither keeps the run waiting nor survives it.

import { describe, it } from "vitest";
import { say } from "../messages.ts";
import { expectCode, expectNothingLeft, rejection, within, workspace } from "../support.ts";
import { NODE, runProcess } from "./common.ts";

describe("evidence/reaped", () => {
  it("settles with no process of the program's group alive, after a timeout and after a normal exit", async () => {
    const ws = workspace();
    const error = await rejection(runProcess(NODE, { args: ws.programArgs("hang", "--grandchild"), timeoutMs: 300 }), say("带孙进程、永不结束的程序", "a never-ending program with a grandchild"));
    expectCode(error, "TIMEOUT", say("带孙进程、永不结束的程序", "a never-ending program with a grandchild"));
    expectNothingLeft(ws, "TIMEOUT");

    const other = workspace();
    await within(runProcess(NODE, { args: other.programArgs("spawn-and-exit"), timeoutMs: 10_000 }), say("留下孙进程后自己退出的程序", "a program that exits and leaves a grandchild"));
    expectNothingLeft(other, say("程序退出", "the program's exit"));
  });
});
