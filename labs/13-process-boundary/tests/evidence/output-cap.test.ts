// Evidence test: evidence/output-cap. An endless writer is stopped at maxOutputBytes, with
// what it wrote so far kept, and memory stays bounded.

import { describe, it } from "vitest";
import { msg, say } from "../messages.ts";
import { check, expectCode, expectNothingLeft, rejection, within, workspace } from "../support.ts";
import { NODE, runProcess } from "./common.ts";

const CAP = 64 * 1024;

describe("evidence/output-cap", () => {
  it("stops a program whose output passes maxOutputBytes with OUTPUT_LIMIT, keeping at most the cap", async () => {
    const ws = workspace();
    const small = await within(runProcess(NODE, { args: ws.programArgs("flood", "1000"), maxOutputBytes: CAP }), say("写 1000 字节的程序", "a program writing 1000 bytes"));
    check(small.stdout?.length === 1000, msg("wrongValue", { label: say("1000 字节的输出", "1000 bytes of output"), expected: 1000, actual: small.stdout?.length }));

    const error = await rejection(runProcess(NODE, { args: ws.programArgs("flood", String(8 * 1024 * 1024)), maxOutputBytes: CAP }), say("写 8 MiB 的程序", "a program writing 8 MiB"));
    expectCode(error, "OUTPUT_LIMIT", say("写 8 MiB 的程序", "a program writing 8 MiB"));
    const kept = Buffer.byteLength(String(error.run?.stdout ?? ""));
    check(kept > 0 && kept <= CAP, msg("outputTooBig", { max: CAP, actual: kept }));
    expectNothingLeft(ws, "OUTPUT_LIMIT");
  });
});
