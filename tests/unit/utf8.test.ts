import { describe, expect, it } from "vitest";
import { decodeWholeCharacters } from "#submission/src/utf8.ts";

const bytes = (text: string) => Buffer.from(text, "utf8");

describe("decodeWholeCharacters", () => {
  it("decodes whole text unchanged, ASCII and multi-byte alike", () => {
    for (const text of ["", "a", "abc", "é", "错误", "a€b", "😀", "x😀"]) {
      expect(decodeWholeCharacters(bytes(text), false)).toBe(text);
      expect(decodeWholeCharacters(bytes(text), true)).toBe(text);
    }
  });

  it("drops an unfinished character at the end, whatever its length", () => {
    // 2-, 3- and 4-byte characters cut after each of their leading bytes.
    for (const [text, keep] of [["aé", "a"], ["a错", "a"], ["a😀", "a"]] as const) {
      const all = bytes(text);
      for (let cut = 2; cut < all.length; cut += 1) expect(decodeWholeCharacters(all.subarray(0, cut), false)).toBe(keep);
    }
    expect(decodeWholeCharacters(bytes("错误").subarray(0, 4), false)).toBe("错");
  });

  it("drops the continuation bytes of a character whose head was cut, only when told so", () => {
    const all = bytes("错误"); // e9 94 99 e8 af af
    expect(decodeWholeCharacters(all.subarray(1), true)).toBe("误");
    expect(decodeWholeCharacters(all.subarray(2), true)).toBe("误");
    const emoji = bytes("😀a"); // f0 9f 98 80 61
    expect(decodeWholeCharacters(emoji.subarray(1), true)).toBe("a");
    expect(decodeWholeCharacters(emoji.subarray(3), true)).toBe("a");
    // Without the flag the stray bytes are decoded as they are (replacement characters).
    expect(decodeWholeCharacters(all.subarray(1), false)).toBe("\ufffd\ufffd误");
  });

  it("skips at most three continuation bytes at the head", () => {
    const stray = Buffer.from([0x80, 0x80, 0x80, 0x80, 0x61]);
    expect(decodeWholeCharacters(stray, true)).toBe("\ufffda");
  });

  it("keeps a complete character at the very end and a lone continuation run as it is", () => {
    expect(decodeWholeCharacters(bytes("ab错"), false)).toBe("ab错");
    // Only continuation bytes, head cut: nothing whole is left.
    expect(decodeWholeCharacters(Buffer.from([0x80, 0x80]), true)).toBe("");
    // Four trailing continuation bytes after a lead: the walk back stops after three.
    const overlong = Buffer.from([0x61, 0xf0, 0x80, 0x80, 0x80, 0x80]);
    expect(decodeWholeCharacters(overlong, false)).toBe(overlong.toString("utf8"));
  });

  it("treats a byte that cannot lead a sequence as one character", () => {
    const invalid = Buffer.from([0x61, 0xff]);
    expect(decodeWholeCharacters(invalid, false)).toBe("a\ufffd");
    const lone = Buffer.from([0x61, 0xf8, 0x80]);
    expect(decodeWholeCharacters(lone, false)).toBe(lone.toString("utf8"));
  });
});
