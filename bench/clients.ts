// The three clients under test behind one small interface, and the two servers they talk to.
// Each adapter does what a careful user of that client would do with default settings; the
// one exception is stated where it is made (the reference client's maxPending for the
// 10,000-call burst).

import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpClient } from "../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { FloorClient } from "./floor-client.ts";

export const CLIENT_NAMES = ["floor", "reference", "sdk"] as const;
export type ClientName = (typeof CLIENT_NAMES)[number];

export const SERVER_NAMES = ["raw", "sdk"] as const;
export type ServerName = (typeof SERVER_NAMES)[number];

const SERVER_SCRIPTS: Record<ServerName, string> = {
  raw: fileURLToPath(new URL("./echo-server.mjs", import.meta.url)),
  sdk: fileURLToPath(new URL("./sdk-server.mjs", import.meta.url)),
};

export interface BenchClient {
  /** Spawns the server and completes the handshake. */
  start(): Promise<void>;
  listTools(): Promise<unknown>;
  /** Calls a tool and resolves with its result; rejects the way the client rejects. */
  call(tool: string, args: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

export interface ClientSettings {
  /** Requests the client must accept in flight at once (only the reference client has a cap). */
  inFlight?: number;
}

export function serverCommand(server: ServerName): { executable: string; args: string[] } {
  return { executable: process.execPath, args: [SERVER_SCRIPTS[server]] };
}

export function createClient(name: ClientName, server: ServerName, settings: ClientSettings = {}): BenchClient {
  const { executable, args } = serverCommand(server);
  switch (name) {
    case "floor":
      return floorClient(executable, args);
    case "reference":
      return referenceClient(executable, args, settings);
    case "sdk":
      return sdkClient(executable, args);
  }
}

function floorClient(executable: string, args: string[]): BenchClient {
  let client: FloorClient | undefined;
  const running = () => client ?? failNotStarted();
  return {
    async start() {
      client = new FloorClient(executable, args);
      await client.initialize();
    },
    listTools: () => running().request("tools/list", {}),
    call: (tool, toolArgs) => running().request("tools/call", { name: tool, arguments: toolArgs }),
    close: async () => client?.close(),
  };
}

function referenceClient(executable: string, args: string[], settings: ClientSettings): BenchClient {
  // Default settings, except that a burst bigger than the default maxPending (256) needs a
  // cap that admits it; otherwise the burst would measure MCP_BUSY rejections.
  const maxPending = settings.inFlight !== undefined && settings.inFlight > 256 ? settings.inFlight : undefined;
  const client = new McpClient({ executable, args, ...(maxPending !== undefined ? { maxPending } : {}) });
  return {
    start: async () => {
      await client.initialize();
    },
    listTools: () => client.listTools(),
    call: (tool, toolArgs) => client.callTool(tool, toolArgs),
    close: () => client.close(),
  };
}

function sdkClient(executable: string, args: string[]): BenchClient {
  const client = new Client({ name: "bench-sdk", version: "1.0.0" });
  const transport = new StdioClientTransport({ command: executable, args, stderr: "ignore" });
  return {
    start: () => client.connect(transport),
    listTools: () => client.listTools(),
    call: (tool, toolArgs) => client.callTool({ name: tool, arguments: toolArgs }),
    close: () => client.close(),
  };
}

function failNotStarted(): never {
  throw new Error("client not started");
}
