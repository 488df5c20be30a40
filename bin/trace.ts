import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setting } from '../functions/config';
import { TRACES_FILE } from '../lib/local/trace-collector';

const USAGE = `Usage: npm run trace [-- [TRACE_ID] [--json]]
  Shows one trace the local host recorded (the request log line's trace_id; the latest request's without one):
  the function's invocation and, below it, each DynamoDB, S3 and SQS call it made, when it started, how long it
  took and what it answered. --json prints the segment documents as X-Ray received them.
  Reads the local data dir (DRIVE_DATA_DIR, default .drive-data). In AWS the same trace is in the X-Ray console.`;

interface Segment {
  name?: string;
  id?: string;
  trace_id?: string;
  parent_id?: string;
  type?: string;
  start_time?: number;
  end_time?: number;
  origin?: string;
  http?: { request?: { method?: string; url?: string }; response?: { status?: number } };
  aws?: { operation?: string; retries?: number };
  error?: boolean;
  fault?: boolean;
  throttle?: boolean;
}

/** `npm run trace`: a trace of the local host as a waterfall. */
async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const segments = await recorded(setting('dataDir'));
  const traceId = positionals[0] ?? segments.filter((s) => s.origin === 'AWS::Lambda::Function').at(-1)?.trace_id;
  const trace = segments.filter((s) => s.trace_id !== undefined && s.trace_id === traceId);
  if (!traceId || trace.length === 0) {
    console.error(traceId ? `no trace ${traceId} in the local host's traces` : 'the local host has recorded no trace yet: send it a request');
    return 1;
  }
  if (values.json) {
    for (const segment of trace) console.log(JSON.stringify(segment));
    return 0;
  }
  console.log(waterfall(traceId, trace));
  return 0;
}

/** The documents in the traces file and the one before it, oldest first. */
async function recorded(dataDir: string): Promise<Segment[]> {
  const files = ['traces.1.jsonl', TRACES_FILE];
  const texts = await Promise.all(files.map((file) => readFile(join(dataDir, file), 'utf8').catch(() => '')));
  const segments: Segment[] = [];
  // Each file on its own lines: the last line of the older one may have been cut short.
  for (const line of texts.join('\n').split('\n')) {
    if (line === '') continue;
    try {
      segments.push(JSON.parse(line) as Segment);
    } catch {
      // A line cut short when the host stopped.
    }
  }
  return segments;
}

/** Each invocation of the trace, then the calls below it in the order they started, as offsets from the first. */
function waterfall(traceId: string, trace: Segment[]): string {
  const start = Math.min(...trace.map((s) => s.start_time ?? Infinity));
  const ms = (seconds: number | undefined) => ((seconds ?? start) - start) * 1000;
  const lines = [`trace ${traceId}`, '', '   start      took   segment'];
  const invocations = trace.filter((s) => s.origin === 'AWS::Lambda::Function').sort((a, b) => (a.start_time ?? 0) - (b.start_time ?? 0));
  for (const invocation of invocations) {
    lines.push(row(ms(invocation.start_time), ms(invocation.end_time) - ms(invocation.start_time), `${invocation.name} ${invocation.http?.request?.method ?? ''} ${invocation.http?.request?.url ?? ''} → ${invocation.http?.response?.status ?? '?'}`));
    const calls = trace.filter((s) => s.type === 'subsegment' && s.parent_id === invocation.id).sort((a, b) => (a.start_time ?? 0) - (b.start_time ?? 0));
    for (const call of calls) {
      const flags = [call.fault ? 'fault' : '', call.throttle ? 'throttled' : call.error ? 'error' : '', call.aws?.retries ? `${call.aws.retries} retries` : ''].filter(Boolean).join(', ');
      lines.push(row(ms(call.start_time), ms(call.end_time) - ms(call.start_time), `  ${call.name} ${call.aws?.operation ?? ''} → ${call.http?.response?.status ?? '?'}${flags ? ` (${flags})` : ''}`));
    }
  }
  // Any process on this machine can send the host's daemon a document: its names are shown, never obeyed.
  return lines.join('\n').replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '?');
}

function row(offset: number, took: number, what: string): string {
  return `${offset.toFixed(1).padStart(8)} ms ${took.toFixed(1).padStart(6)} ms   ${what}`;
}

main(process.argv.slice(2)).then(
  // Not process.exit: what is written to a pipe would be cut off.
  (code) => void (process.exitCode = code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
