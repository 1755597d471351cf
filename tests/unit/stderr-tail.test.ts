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

  it("cuts inside the oldest chunk when dropping it whole would keep too little", () => {
    const tail = new StderrTail(5);
    tail.push(Buffer.from("abc"));
    tail.push(Buffer.from("defg"));
    expect(tail).toMatchObject({ text: "cdefg", truncated: true, size: 5 });
    tail.push(Buffer.from("h"));
    expect(tail).toMatchObject({ text: "defgh", size: 5 });
  });

  it("drops several whole chunks at once and then cuts the next", () => {
    const tail = new StderrTail(4);
    for (const part of ["a", "b", "c"]) tail.push(Buffer.from(part));
    tail.push(Buffer.from("defgh"));
    expect(tail).toMatchObject({ text: "efgh", truncated: true, size: 4 });
  });

  it("is not truncated when it holds exactly the cap, and is once one more byte comes", () => {
    const tail = new StderrTail(5);
    tail.push(Buffer.from("ab"));
    tail.push(Buffer.from("cde"));
    expect(tail).toMatchObject({ text: "abcde", truncated: false, size: 5 });
    tail.push(Buffer.from("f"));
    expect(tail).toMatchObject({ text: "bcdef", truncated: true, size: 5 });
  });

  it("keeps an empty chunk from counting as dropped output", () => {
    const tail = new StderrTail(0);
    tail.push(Buffer.alloc(0));
    expect(tail).toMatchObject({ text: "", truncated: false, size: 0 });
  });

  it("decodes stray bytes at the head as they are while nothing was dropped", () => {
    const tail = new StderrTail(8);
    tail.push(Buffer.from([0x80, 0x61]));
    expect(tail).toMatchObject({ text: "\ufffda", truncated: false });
  });

  it("drops a character cut at the head only once bytes were dropped", () => {
    const tail = new StderrTail(5); // "错误" is 6 bytes: one byte of "错" goes
    tail.push(Buffer.from("错误"));
    expect(tail).toMatchObject({ text: "误", truncated: true, size: 5 });
  });
});
