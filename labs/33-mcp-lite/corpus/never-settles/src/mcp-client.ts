// Corpus: nothing ever settles. Hostile to a grader without hang detectors.
export class McpError extends Error {
  code = "MCP_ERROR";
}

export class McpClient {
  readonly pendingCount = 0;
  readonly pid: number | undefined = undefined;
  readonly initialized = false;
  readonly stderr = { text: "", truncated: false };
  constructor(_options: unknown) {}
  initialize(): Promise<never> {
    return new Promise(() => {});
  }
  listTools(): Promise<never> {
    return new Promise(() => {});
  }
  callTool(_name: string, _args?: unknown, _options?: unknown): Promise<never> {
    return new Promise(() => {});
  }
  close(): Promise<never> {
    return new Promise(() => {});
  }
}
