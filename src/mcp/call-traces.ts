// Traces of tmux_run calls on the MCP transport (TMUX_RUN_TRACE): when each request was parsed,
// when its response was written, and one trace line per call in between (src/core/protocol/trace.ts).
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { Trace, monotonicMs, traceSink, type TraceSink } from '../core/protocol/trace.js';

export class CallTraces {
  /** Requests parsed and not yet handled (the handler takes its stamp). */
  private readonly parsed = new Map<RequestId, number>();
  /** Calls handled whose response has not been written yet. */
  private readonly open = new Map<RequestId, Trace>();

  constructor(private readonly sink: NonNullable<TraceSink>) {}

  /** Wraps a connected transport: stamps each request as it arrives and each response as it is written. */
  attach(transport: Transport): void {
    const onmessage = transport.onmessage;
    if (onmessage) {
      transport.onmessage = (message, extra) => {
        if ('method' in message && message.method === 'tools/call' && 'id' in message) {
          this.parsed.set(message.id, monotonicMs());
        }
        onmessage.call(transport, message, extra);
      };
    }
    const send = transport.send.bind(transport);
    // StdioServerTransport serializes and writes inside send() itself (the promise only waits for
    // a drain): once send() returns, the response has been written, or queued behind a full pipe.
    transport.send = (message: JSONRPCMessage, options) => {
      const sent = send(message, options);
      if ('id' in message && message.id !== undefined && !('method' in message)) this.finish(message.id, true);
      return sent;
    };
  }

  /** The trace of a call whose handler was just entered. */
  begin(id: RequestId): Trace {
    const trace = new Trace();
    const parsed = this.parsed.get(id);
    this.parsed.delete(id);
    if (parsed !== undefined) trace.mark('parsed', parsed);
    trace.mark('handled');
    this.open.set(id, trace);
    return trace;
  }

  /** Ends a call's trace: when its response was written, or with no response (a cancelled request). */
  finish(id: RequestId, written: boolean): void {
    const trace = this.open.get(id);
    if (!trace) return;
    this.open.delete(id);
    if (written) trace.mark('written');
    else trace.info.response = 'none (cancelled)';
    try {
      this.sink(trace.line());
    } catch {
      /* a trace that cannot be written is dropped; the call is unaffected */
    }
  }
}

/** The call traces TMUX_RUN_TRACE asks for, or undefined when it is off. */
export function callTraces(value: string | undefined = process.env.TMUX_RUN_TRACE): CallTraces | undefined {
  const sink = traceSink(value);
  return sink ? new CallTraces(sink) : undefined;
}
