// @ts-check
// A real MCP stdio server built with the official TypeScript SDK (low-level Server API),
// so the interop test proves the reference client speaks MCP, not only our fixture.
// Tools: echo {value} → text content; add {a, b} → text content; boom → a JSON-RPC error.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "lab33-sdk-interop", version: "0.1.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "echo",
      description: "Returns its value as text.",
      inputSchema: { type: "object", properties: { value: { type: "string" } }, required: ["value"] },
    },
    {
      name: "add",
      description: "Adds two numbers.",
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    },
    { name: "boom", description: "Always fails.", inputSchema: { type: "object", properties: {} } },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = /** @type {Record<string, unknown>} */ (request.params.arguments ?? {});
  switch (request.params.name) {
    case "echo":
      return { content: [{ type: "text", text: String(args.value) }] };
    case "add":
      return { content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] };
    case "boom":
      throw new McpError(ErrorCode.InvalidParams, "boom on purpose", { hint: "expected" });
    default:
      throw new McpError(ErrorCode.MethodNotFound, `unknown tool ${request.params.name}`);
  }
});

// A safety net like the fixture's: never outlive a test run.
setTimeout(() => process.exit(99), 30_000).unref();
await server.connect(new StdioServerTransport());
