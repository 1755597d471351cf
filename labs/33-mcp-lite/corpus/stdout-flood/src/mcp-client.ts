// Corpus: floods stdout, hoping to exhaust the grader's memory or stall its pipes.
const chunk = "flood ".repeat(1024 * 1024);
function flood(): void {
  for (let i = 0; i < 5; i++) process.stdout.write(chunk);
}
flood();

export class McpError extends Error {
  code = "MCP_ERROR";
}

export class McpClient {
  readonly pendingCount = 0;
  readonly pid: number | undefined = undefined;
  readonly initialized = false;
  readonly stderr = { text: "", truncated: false };
  constructor(_options: unknown) {}
  async initialize(): Promise<unknown> {
    flood();
    throw new McpError("flooded");
  }
  async listTools(): Promise<unknown[]> {
    flood();
    return [];
  }
  async callTool(): Promise<unknown> {
    flood();
    return undefined;
  }
  async close(): Promise<void> {}
}
