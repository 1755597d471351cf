// The subordinate-id block a grader that is not root maps into its sandbox (/etc/subuid's format).
import { describe, expect, it } from "vitest";
import { idBlockStart, MAPPED_ID_MIN, pickPayloadUsers, realUidsInUse, ROOT_ID_BASE, ROOT_ID_PAIRS, SANDBOX_UID } from "../../grader/sandbox/index.ts";

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

describe("pickPayloadUsers", () => {
  const none = () => new Set<number>();
  it("picks, as root, a pair of ids from the range no system assigns, the host's one above the payload's", () => {
    expect(pickPayloadUsers(undefined, () => 0, none)).toEqual({ uid: ROOT_ID_BASE, hostUid: ROOT_ID_BASE + 1 });
    const last = pickPayloadUsers(undefined, () => 0.999_999_999, none);
    expect(last).toEqual({ uid: ROOT_ID_BASE + 2 * (ROOT_ID_PAIRS - 1), hostUid: ROOT_ID_BASE + 2 * ROOT_ID_PAIRS - 1 });
    // Below systemd's foreign range (0x7ffe0000) and uid_t's -1.
    expect(last.hostUid).toBeLessThan(0x7ffe_0000);
  });

  it("picks, with subordinate ids, a pair inside the mapped ids (1 to SANDBOX_UID), clear of nobody", () => {
    const block = { uid: 100_000, gid: 100_000, count: SANDBOX_UID };
    expect(pickPayloadUsers(block, () => 0, none)).toEqual({ uid: MAPPED_ID_MIN, hostUid: MAPPED_ID_MIN + 1 });
    const last = pickPayloadUsers(block, () => 0.999_999_999, none);
    expect(last.hostUid).toBeLessThan(SANDBOX_UID - 1);
    expect(last.uid % 2).toBe(MAPPED_ID_MIN % 2);
  });

  it("draws again while a running process holds either id (as the real ids they map to)", () => {
    const draws = [0, 0.5, 0.75];
    const next = () => draws.shift()!;
    // The first pair's host id and the second pair's own id are taken.
    const taken = new Set([ROOT_ID_BASE + 1, ROOT_ID_BASE + 2 * Math.floor(0.5 * ROOT_ID_PAIRS)]);
    expect(pickPayloadUsers(undefined, next, () => taken).uid).toBe(ROOT_ID_BASE + 2 * Math.floor(0.75 * ROOT_ID_PAIRS));
    // With a block, the real id of inside id u is block + u - 1.
    const block = { uid: 100_000, gid: 100_000, count: SANDBOX_UID };
    const mapped = [0, 0.5];
    expect(pickPayloadUsers(block, () => mapped.shift()!, () => new Set([100_000 + MAPPED_ID_MIN - 1])).uid).not.toBe(MAPPED_ID_MIN);
  });

  it("keeps its last draw when every draw was taken (16 of them)", () => {
    let calls = 0;
    const pick = pickPayloadUsers(undefined, () => (calls++, 0), () => new Set([ROOT_ID_BASE]));
    expect(calls).toBe(16);
    expect(pick.uid).toBe(ROOT_ID_BASE);
  });

  it("reads the real uid of the processes it can see", () => {
    expect(realUidsInUse().has(process.getuid!())).toBe(true);
  });
});
