// Evidence test: evidence/happy-path. A program that writes and exits is run to its end.

import { describe, it } from "vitest";
import { msg, say } from "../messages.ts";
import { check, expectNothingLeft, within, workspace } from "../support.ts";
import { NODE, runProcess } from "./common.ts";

describe("evidence/happy-path", () => {
  it("resolves with the exit code, stdout and stderr of a program that exits by itself", async () => {
    const ws = workspace();
    const result = await within(runProcess(NODE, { args: ws.programArgs("hello") }), say("runProcess(hello)", "runProcess(hello)"));
    const got = { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    const want = { exitCode: 3, stdout: "hello", stderr: "note" };
    check(JSON.stringify(got) === JSON.stringify(want), msg("wrongValue", { label: say("运行结果", "the result"), expected: want, actual: got }));
    expectNothingLeft(ws, say("正常结束", "a normal exit"));
  });
});
