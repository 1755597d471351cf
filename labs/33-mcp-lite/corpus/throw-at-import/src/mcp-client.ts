// Corpus: the module throws while it loads.
export class McpError extends Error {}
export class McpClient {}
throw new Error("configuration file not found");
