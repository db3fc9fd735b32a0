// zod without its just-in-time parsers, set before any schema is built (src/mcp/serve.ts imports
// this first; zod reads the setting as each object schema is made): the MCP SDK's schemas would
// otherwise compile a parser with `new Function` for each kind of message at its first parse,
// code V8's code cache cannot hold, at every start; the messages a server parses are small.
import { config } from 'zod/v4/core';

config({ jitless: true });
