// Keeps the last `maxBytes` bytes of a stream (crash reasons are at the end) and says
// whether anything was dropped. Counted in bytes, decoded only when read, and cut on a
// UTF-8 character boundary so a Chinese character is never split into garbage.

export class StderrTail {
  readonly maxBytes: number;
  private chunks: Buffer[] = [];
  private bytes = 0;
  private dropped = false;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get truncated(): boolean {
    return this.dropped;
  }

  get size(): number {
    return this.bytes;
  }

  push(chunk: Buffer): void {
    if (this.maxBytes === 0) {
      this.dropped ||= chunk.length > 0;
      return;
    }
    if (chunk.length >= this.maxBytes) {
      this.dropped ||= chunk.length > this.maxBytes || this.bytes > 0;
      this.chunks = [chunk.subarray(chunk.length - this.maxBytes)];
      this.bytes = this.maxBytes;
      return;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.maxBytes) {
      const head = this.chunks[0]!;
      const excess = this.bytes - this.maxBytes;
      this.dropped = true;
      if (head.length <= excess) {
        this.chunks.shift();
        this.bytes -= head.length;
      } else {
        this.chunks[0] = head.subarray(excess);
        this.bytes -= excess;
      }
    }
  }

  get text(): string {
    const all = Buffer.concat(this.chunks, this.bytes);
    return decodeWholeCharacters(all, this.dropped);
  }
}

// Drops continuation bytes at the start (when the head was cut) and an unfinished
// sequence at the end (when the writer is mid-character), then decodes.
export function decodeWholeCharacters(bytes: Buffer, headWasCut: boolean): string {
  let start = 0;
  if (headWasCut) {
    while (start < bytes.length && start < 3 && isContinuation(bytes[start]!)) start += 1;
  }
  let end = bytes.length;
  // Walk back over at most three continuation bytes to the lead byte of the last character.
  let lead = end - 1;
  while (lead >= start && end - lead <= 3 && isContinuation(bytes[lead]!)) lead -= 1;
  if (lead >= start) {
    const needed = sequenceLength(bytes[lead]!);
    if (needed > end - lead) end = lead;
  }
  return bytes.toString("utf8", start, end);
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) === 0xc0) return 2;
  if ((lead & 0xf0) === 0xe0) return 3;
  if ((lead & 0xf8) === 0xf0) return 4;
  return 1;
}
