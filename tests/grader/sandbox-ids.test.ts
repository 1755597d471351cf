// The subordinate-id block a grader that is not root maps into its sandbox (/etc/subuid's format).
import { describe, expect, it } from "vitest";
import { identityLines } from "../../grader/sandbox/ns-root.mjs";
import { idBlockStart, MAPPED_ID_MIN, mappedRanges, pickPayloadUsers, realUidsInUse, ROOT_ID_BASE, ROOT_ID_PAIRS, SANDBOX_UID } from "../../grader/sandbox/index.ts";

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
  // The initial user namespace (every id), and a container's that maps 65 536 ids.
  const whole = { uidMap: "0 0 4294967295\n", gidMap: "0 0 4294967295\n" };
  const container = { uidMap: "         0     100000      65536\n", gidMap: "0 100000 65536\n" };
  const block = { uid: 100_000, gid: 100_000, count: SANDBOX_UID };

  it("picks, as root, a pair of ids from the range no system assigns, the host's one above the payload's", () => {
    expect(pickPayloadUsers(undefined, { ...whole, random: () => 0, inUse: none })).toEqual({ uid: ROOT_ID_BASE, hostUid: ROOT_ID_BASE + 1 });
    const last = pickPayloadUsers(undefined, { ...whole, random: () => 0.999_999_999, inUse: none });
    expect(last).toEqual({ uid: ROOT_ID_BASE + 2 * (ROOT_ID_PAIRS - 1), hostUid: ROOT_ID_BASE + 2 * ROOT_ID_PAIRS - 1 });
    // Below systemd's foreign range (0x7ffe0000) and uid_t's -1.
    expect(last.hostUid).toBeLessThan(0x7ffe_0000);
  });

  it("picks, as root of a namespace that maps only 65 536 ids (a container), a pair it maps that no user or group is named by", () => {
    const named = () => new Set([MAPPED_ID_MIN, 1002]);
    // The first draw (1000, 1001) is named; the second (1002, 1003) too; the third is free.
    const draws = [0, 1 / 32_265 + 1e-9, 2 / 32_265 + 1e-9];
    const pick = pickPayloadUsers(undefined, { ...container, random: () => draws.shift()!, inUse: none, named });
    expect(pick).toEqual({ uid: MAPPED_ID_MIN + 4, hostUid: MAPPED_ID_MIN + 5 });
    const last = pickPayloadUsers(undefined, { ...container, random: () => 0.999_999_999, inUse: none, named: none });
    expect(last.hostUid).toBeLessThan(SANDBOX_UID - 1);
    // The gid map counts too: a group map of 1000 ids leaves neither range, so nobody's pair.
    expect(pickPayloadUsers(undefined, { uidMap: container.uidMap, gidMap: "0 100000 1000", random: () => 0, inUse: none, named: none })).toEqual({ uid: SANDBOX_UID, hostUid: SANDBOX_UID - 1 });
  });

  it("picks, with subordinate ids, a pair inside the mapped ids (1 to SANDBOX_UID), clear of nobody, whatever this namespace maps", () => {
    expect(pickPayloadUsers(block, { uidMap: "0 1000 1", gidMap: "0 1000 1", random: () => 0, inUse: none })).toEqual({ uid: MAPPED_ID_MIN, hostUid: MAPPED_ID_MIN + 1 });
    const last = pickPayloadUsers(block, { random: () => 0.999_999_999, inUse: none });
    expect(last.hostUid).toBeLessThan(SANDBOX_UID - 1);
    expect(last.uid % 2).toBe(MAPPED_ID_MIN % 2);
  });

  it("draws again while a running process holds either id (as the real ids they map to)", () => {
    const draws = [0, 0.5, 0.75];
    // The first pair's host id and the second pair's own id are taken.
    const taken = new Set([ROOT_ID_BASE + 1, ROOT_ID_BASE + 2 * Math.floor(0.5 * ROOT_ID_PAIRS)]);
    expect(pickPayloadUsers(undefined, { ...whole, random: () => draws.shift()!, inUse: () => taken }).uid).toBe(ROOT_ID_BASE + 2 * Math.floor(0.75 * ROOT_ID_PAIRS));
    // With a block, the real id of inside id u is block + u - 1.
    const mapped = [0, 0.5];
    expect(pickPayloadUsers(block, { random: () => mapped.shift()!, inUse: () => new Set([100_000 + MAPPED_ID_MIN - 1]) }).uid).not.toBe(MAPPED_ID_MIN);
  });

  it("takes no map at all (a kernel without user namespaces) as every id, a map it cannot read as none, and a map split over lines as one", () => {
    expect(pickPayloadUsers(undefined, { uidMap: null, gidMap: null, random: () => 0, inUse: none }).uid).toBe(ROOT_ID_BASE);
    expect(pickPayloadUsers(undefined, { uidMap: "", gidMap: "", random: () => 0, inUse: none, named: none })).toEqual({ uid: SANDBOX_UID, hostUid: SANDBOX_UID - 1 });
    // Neither line alone holds ids 1000 to 65531.
    const split = { uidMap: "0 100000 30000\n30000 130000 35536\n", gidMap: "0 100000 65536\n" };
    expect(pickPayloadUsers(undefined, { ...split, random: () => 0, inUse: none, named: none }).uid).toBe(MAPPED_ID_MIN);
  });

  it("skips the ids already given to payloads still running (taken)", () => {
    const draws = [0, 0];
    const taken = new Set([ROOT_ID_BASE, ROOT_ID_BASE + 1]);
    let calls = 0;
    const pick = pickPayloadUsers(undefined, { ...whole, random: () => (calls++, draws.shift() ?? 0.5), inUse: none, taken });
    expect(pick.uid).toBe(ROOT_ID_BASE + 2 * Math.floor(0.5 * ROOT_ID_PAIRS));
    expect(calls).toBe(3);
  });

  it("keeps its last draw when every draw was taken (16 of them)", () => {
    let calls = 0;
    const pick = pickPayloadUsers(undefined, { ...whole, random: () => (calls++, 0), inUse: () => new Set([ROOT_ID_BASE]) });
    expect(calls).toBe(16);
    expect(pick.uid).toBe(ROOT_ID_BASE);
  });

  it("reads the ranges of a uid_map, and the real uid of the processes it can see", () => {
    expect(mappedRanges("0 0 4294967295\n")).toEqual([[0, 4294967295]]);
    // Adjacent or overlapping lines are one range; gaps stay.
    expect(mappedRanges("  1 100000 65536\n  0 1000 1\n\nbad line\n")).toEqual([[0, 65537]]);
    expect(mappedRanges("0 1000 1\n2 100000 10\n")).toEqual([[0, 1], [2, 12]]);
    expect(realUidsInUse().has(process.getuid!())).toBe(true);
  });
});

describe("identityLines", () => {
  it("names the payload's users first and drops the host's lines for the same ids, passing other bytes through", () => {
    const passwd = Buffer.concat([Buffer.from("root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Al\u00e9:/home/alice:/bin/sh\n"), Buffer.from([0x62, 0x6f, 0x62, 0x3a, 0x78, 0x3a, 0x31, 0x30, 0x30, 0x31, 0x3a, 0x31, 0x30, 0x30, 0x31, 0x3a, 0xe9, 0x3a, 0x2f, 0x3a, 0x2f])]);
    const group = Buffer.from("root:x:0:\nalice:x:1000:");
    const { passwd: p, group: g } = identityLines(passwd, group, 1000, 1001);
    const lines = p.toString("latin1").split("\n");
    expect(lines.slice(0, 2)).toEqual(["lab-payload:x:1000:1000:grading sandbox:/nonexistent:/usr/sbin/nologin", "lab-host:x:1001:1000:grading sandbox, client host:/nonexistent:/usr/sbin/nologin"]);
    // alice (1000) and bob (1001, a byte that is no UTF-8 in his name field) are gone; root stays.
    expect(lines.slice(2)).toEqual(["root:x:0:0:root:/root:/bin/bash", ""]);
    expect(g.toString()).toBe("lab-payload:x:1000:\nroot:x:0:\n");
    // A last line without a newline gets one; bytes that are no UTF-8 pass as they are.
    const kept = identityLines(Buffer.from([0x63, 0x3a, 0x78, 0x3a, 0x35, 0x3a, 0x35, 0x3a, 0xe9]), Buffer.alloc(0), 7, 8).passwd;
    expect(kept.subarray(kept.length - 10)).toEqual(Buffer.from([0x63, 0x3a, 0x78, 0x3a, 0x35, 0x3a, 0x35, 0x3a, 0xe9, 0x0a]));
  });
});
