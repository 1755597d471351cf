import { describe, expect, it } from "vitest";
import { decodeWholeCharacters, StderrTail } from "#submission/src/stderr-tail.ts";

describe("StderrTail", () => {
  it("keeps everything while under the cap", () => {
    const tail = new StderrTail(16);
    tail.push(Buffer.from("abc"));
    tail.push(Buffer.from("def"));
    expect(tail).toMatchObject({ text: "abcdef", truncated: false, size: 6 });
  });

  it("keeps the last bytes and says it dropped the rest", () => {
    const tail = new StderrTail(8);
    for (const part of ["0123", "4567", "89ab", "cdef"]) tail.push(Buffer.from(part));
    expect(tail).toMatchObject({ text: "89abcdef", truncated: true, size: 8 });
  });

  it("keeps the tail of a single chunk larger than the cap", () => {
    const tail = new StderrTail(4);
    tail.push(Buffer.from("hello world"));
    expect(tail).toMatchObject({ text: "orld", truncated: true });
  });

  it("never shows half a Chinese character at either end", () => {
    const tail = new StderrTail(7); // "崩溃了" is 9 bytes: the cut lands inside "崩"
    tail.push(Buffer.from("崩溃了"));
    expect(tail.text).toBe("溃了");
    expect(tail.truncated).toBe(true);
    // A writer that stopped mid-character: the unfinished tail is not decoded as garbage.
    const bytes = Buffer.from("错误");
    expect(decodeWholeCharacters(bytes.subarray(0, 4), false)).toBe("错");
  });

  it("keeps nothing with a zero cap but still reports truncation", () => {
    const tail = new StderrTail(0);
    tail.push(Buffer.from("x"));
    expect(tail).toMatchObject({ text: "", truncated: true });
  });
});
