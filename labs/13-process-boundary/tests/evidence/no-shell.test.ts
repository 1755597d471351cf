// Evidence test: evidence/no-shell. Arguments reach the program verbatim, and an executable
// is a program, never a command line for a shell to reinterpret.

import { describe, it } from "vitest";
import { msg, say } from "../messages.ts";
import { check, expectCode, expectNothingLeft, rejection, within, workspace } from "../support.ts";
import { NODE, runProcess } from "./common.ts";

const ODD = ["two words", "$(echo injected)", "a;b", "*", "'quoted'", '"double"', "`tick`", "x > y", ""];

describe("evidence/no-shell", () => {
  it("passes odd arguments through verbatim and refuses an executable that is a command line", async () => {
    const ws = workspace();
    // In the workspace: a shell would act on "x > y" and "*" there, not in the project.
    const result = await within(runProcess(NODE, { args: ws.programArgs("args", ...ODD), cwd: ws.dir }), "runProcess(args)");
    let got: unknown;
    try {
      got = JSON.parse(result.stdout);
    } catch {
      got = result.stdout;
    }
    check(JSON.stringify(got) === JSON.stringify(ODD), msg("argsChanged", { sent: ODD, got }));

    const line = await rejection(runProcess(`${NODE} -e 1`), say("把整条命令当作 executable", "a whole command line as executable"));
    expectCode(line, "SPAWN_FAILED", say("把整条命令当作 executable", "a whole command line as executable"));
    const missing = await rejection(runProcess("/no/such/program-lab13"), say("不存在的程序", "a missing program"));
    expectCode(missing, "SPAWN_FAILED", say("不存在的程序", "a missing program"));
    expectNothingLeft(ws, say("运行结束", "the runs"));
  });
});
