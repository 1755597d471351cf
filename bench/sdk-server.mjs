// @ts-check
// The same echo server as bench/echo-server.mjs, written with the official MCP TypeScript SDK
// (low-level Server + StdioServerTransport). Pairing each client with both servers separates
// client cost from server cost. Tools: echo and length, with the same answers as echo-server.mjs.
//
// Usage: node bench/sdk-server.mjs   (exits when stdin ends, or after 120 s whatever happens)
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

// No bench server may outlive a run by accident.
setTimeout(() => process.exit(99), 120_000).unref();

const valueSchema = { type: /** @type {const} */ ("object"), properties: { value: { type: "string" } }, required: ["value"] };
const server = new Server({ name: "bench-echo-sdk", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: "echo", description: "Answers with its value.", inputSchema: valueSchema },
    { name: "length", description: "Answers with the length of its value.", inputSchema: valueSchema },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const value = String(request.params.arguments?.value ?? "");
  if (request.params.name === "echo") return { content: [{ type: "text", text: value }] };
  if (request.params.name === "length") return { content: [{ type: "text", text: String(value.length) }] };
  return { content: [{ type: "text", text: `unknown tool ${request.params.name}` }], isError: true };
});

const transport = new StdioServerTransport();
transport.onclose = () => process.exit(0);
process.stdin.on("end", () => process.exit(0));
await server.connect(transport);
