// The subordinate-id block a grader that is not root maps into its sandbox (/etc/subuid's format).
import { describe, expect, it } from "vitest";
import { idBlockStart, SANDBOX_UID } from "../../grader/sandbox/index.ts";

describe("idBlockStart", () => {
  it("finds the user's first block that holds the sandbox's users, by name or by uid", () => {
    const text = ["alice:100000:65536", "bob:165536:1000", "bob:300000:65536", "1002:400000:70000", ""].join("\n");
    expect(idBlockStart(text, "alice", 1000)).toBe(100000);
    // bob's first block is too small for ids 1 to SANDBOX_UID: his second one serves.
    expect(idBlockStart(text, "bob", 1001)).toBe(300000);
    expect(idBlockStart(text, "carol", 1002)).toBe(400000);
    expect(idBlockStart(text, "dave", 1003)).toBeUndefined();
  });

  it("refuses what is not a block: too small, not a number, starting at 0, comments", () => {
    expect(idBlockStart(`eve:100000:${SANDBOX_UID - 1}`, "eve", 1)).toBeUndefined();
    expect(idBlockStart(`eve:100000:${SANDBOX_UID}`, "eve", 1)).toBe(100000);
    expect(idBlockStart("eve:abc:65536\neve:0:65536\n# eve:5:65536\neve:-1:65536", "eve", 1)).toBeUndefined();
    expect(idBlockStart("", "eve", 1)).toBeUndefined();
  });
});
