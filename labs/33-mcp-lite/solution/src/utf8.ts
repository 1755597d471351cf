// UTF-8 on byte boundaries: cut a byte buffer so that no character is split, for the
// stderr tail (cut at its head) and for descriptions capped in bytes (cut at their end).

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

// Bytes in the sequence a lead byte starts; 1 for ASCII and for bytes that cannot lead.
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) === 0xc0) return 2;
  if ((lead & 0xf0) === 0xe0) return 3;
  if ((lead & 0xf8) === 0xf0) return 4;
  return 1;
}
