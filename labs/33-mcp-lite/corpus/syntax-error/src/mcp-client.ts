// Corpus: a client that does not parse. The grader must say "could not grade" and name line 5.
export class McpError extends Error {}

export class McpClient {
  initialize( {
    return Promise.resolve();
  }
}
