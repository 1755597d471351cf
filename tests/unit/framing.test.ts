import { describe, expect, it } from "vitest";
import { encodeLine, encodeRequest, LineDecoder, LineTooLongError } from "#submission/src/framing.ts";

describe("LineDecoder", () => {
  it("splits several lines in one chunk and drops empty lines", () => {
    const decoder = new LineDecoder(1024);
    expect(decoder.push(Buffer.from('{"a":1}\n\n{"b":2}\r\n'))).toEqual(['{"a":1}', '{"b":2}']);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it("reassembles a line split across chunks", () => {
    const decoder = new LineDecoder(1024);
    expect(decoder.push(Buffer.from('{"value":"he'))).toEqual([]);
    expect(decoder.bufferedBytes).toBe(12);
    expect(decoder.push(Buffer.from('llo"}\n{"n'))).toEqual(['{"value":"hello"}']);
    expect(decoder.push(Buffer.from('":1}\n'))).toEqual(['{"n":1}']);
  });

  it("keeps a UTF-8 character intact when its bytes arrive in different chunks", () => {
    const bytes = Buffer.from('{"value":"请求"}\n');
    const decoder = new LineDecoder(1024);
    const lines: string[] = [];
    // Feed one byte at a time: every multi-byte character is split.
    for (const byte of bytes) lines.push(...decoder.push(Buffer.from([byte])));
    expect(lines).toEqual(['{"value":"请求"}']);
    expect(JSON.parse(lines[0]!).value).toBe("请求");
  });

  it("accepts a line of exactly maxLineBytes and refuses one byte more", () => {
    const ok = new LineDecoder(8);
    expect(ok.push(Buffer.from("12345678\n"))).toEqual(["12345678"]);
    const tooLong = new LineDecoder(8);
    expect(() => tooLong.push(Buffer.from("123456789\n"))).toThrow(LineTooLongError);
  });

  it("refuses an oversized line before it is complete, holding no more than the cap", () => {
    const decoder = new LineDecoder(64);
    decoder.push(Buffer.alloc(40, 0x78));
    expect(decoder.bufferedBytes).toBe(40);
    let error: unknown;
    try {
      decoder.push(Buffer.alloc(40, 0x78)); // no newline anywhere: 80 bytes > 64
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(LineTooLongError);
    expect(error).toMatchObject({ limitBytes: 64, seenBytes: 80, name: "LineTooLongError" });
    expect((error as Error).message).toBe("line exceeds maxLineBytes (64 bytes): at least 80 bytes without a newline");
    expect(decoder.bufferedBytes).toBe(0);
    // After a failure the decoder stays failed: a hostile stream cannot resume.
    expect(decoder.push(Buffer.from("{}\n"))).toEqual([]);
  });

  it("never buffers more than the cap while a server streams without newlines", () => {
    const decoder = new LineDecoder(1024 * 1024);
    const chunk = Buffer.alloc(64 * 1024, 0x78);
    let maxBuffered = 0;
    let threw = false;
    for (let i = 0; i < 800 && !threw; i += 1) {
      try {
        decoder.push(chunk);
        maxBuffered = Math.max(maxBuffered, decoder.bufferedBytes);
      } catch {
        threw = true;
      }
    }
    expect(threw).toBe(true);
    expect(maxBuffered).toBeLessThanOrEqual(1024 * 1024);
  });
});

describe("encodeLine", () => {
  it("writes one line even when strings contain newlines", () => {
    const line = encodeLine({ text: "a\nb\r\nc" });
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toContain("\n");
    expect(JSON.parse(line)).toEqual({ text: "a\nb\r\nc" });
  });
});

describe("encodeRequest", () => {
  it("makes exactly the line encodeLine makes of the whole request", () => {
    const params = { name: "echo", arguments: { text: "请求\n" } };
    expect(encodeRequest(7, "tools/call", JSON.stringify(params))).toBe(encodeLine({ jsonrpc: "2.0", id: 7, method: "tools/call", params }));
  });

  it("quotes the method as JSON, so it cannot break out of its string", () => {
    const line = encodeRequest(1, 'x","id":2', "{}");
    expect(JSON.parse(line)).toEqual({ jsonrpc: "2.0", id: 1, method: 'x","id":2', params: {} });
  });
});

describe("LineDecoder and carriage returns", () => {
  it("drops one \r before \n, keeps a \r elsewhere, and drops a line that was only \r", () => {
    const decoder = new LineDecoder(64);
    expect(decoder.push(Buffer.from("a\r\r\n\r\nb\rc\n"))).toEqual(["a\r", "b\rc"]);
  });

  it("counts a line's \r against the cap but not its \n", () => {
    expect(new LineDecoder(3).push(Buffer.from("ab\r\n"))).toEqual(["ab"]);
    expect(() => new LineDecoder(2).push(Buffer.from("ab\r\n"))).toThrow(LineTooLongError);
  });
});
