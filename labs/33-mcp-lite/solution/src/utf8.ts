// UTF-8 on byte boundaries: cut a byte buffer so that no character is split, for the
// stderr tail (cut at its head) and for descriptions capped in bytes (cut at their end).

// Drops continuation bytes at the start (when the head was cut) and an unfinished
// sequence at the end (when the writer is mid-character), then decodes.
export function decodeWholeCharacters(bytes: Buffer, headWasCut: boolean): string {
  let start = 0;
  if (headWasCut) {
    while (start < 3 && isContinuation(bytes[start])) start += 1;
  }
  let end = bytes.length;
  // Walk back over continuation bytes to the lead byte of the last character. (Past the
  // start or the buffer, the walk only meets continuations or nothing: no cut follows.)
  let lead = end - 1;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: the bound only shortens the walk; a longer one ends on a byte that cannot start an unfinished character either
  while (end - lead <= 3 && isContinuation(bytes[lead])) lead -= 1;
  if (sequenceLength(bytes[lead]) > end - lead) end = lead;
  return bytes.toString("utf8", start, end);
}

// True for 10xxxxxx, a byte inside a character; false past the end of the buffer.
function isContinuation(byte: number | undefined): boolean {
  return ((byte ?? 0) & 0xc0) === 0x80;
}

// Bytes in the sequence a lead byte starts; 1 for ASCII, for bytes that cannot lead, and
// past the start of the buffer.
function sequenceLength(lead: number | undefined): number {
  const byte = lead ?? 0;
  if ((byte & 0xe0) === 0xc0) return 2;
  if ((byte & 0xf0) === 0xe0) return 3;
  if ((byte & 0xf8) === 0xf0) return 4;
  return 1;
}
