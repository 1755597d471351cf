// Corpus: ends the process it runs in, hoping a clean exit code reads as "passed".
export class McpError extends Error {
  code = "MCP_ERROR";
}

export class McpClient {
  readonly pendingCount = 0;
  readonly pid: number | undefined = undefined;
  readonly initialized = false;
  readonly stderr = { text: "", truncated: false };
  constructor(_options: unknown) {}
  async initialize(): Promise<never> {
    process.exit(0);
  }
  async listTools(): Promise<never[]> {
    return [];
  }
  async callTool(_name: string, _args?: unknown, _options?: unknown): Promise<unknown> {
    return { content: "ok" };
  }
  async close(): Promise<void> {}
}
