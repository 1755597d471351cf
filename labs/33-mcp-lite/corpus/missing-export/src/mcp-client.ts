// Corpus: McpError is missing from the exports.
export class McpClient {
  readonly pendingCount = 0;
}
