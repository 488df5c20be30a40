import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { BENCH_KEY, startNpmStart } from './environment';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * Issue 27's guarantee "a change appears within 2 seconds of its request answering (p99, locally)", measured:
 * `npm start` as a user runs it (test/bench/environment.ts, `startNpmStart`), one follower long-polling
 * `GET /drive/changes` (limit 1,000, timeout 25) from a cursor taken first, and `writers` clients making
 * `writes` writes between them: each writer's round is an upload of a new file, an upload of another, a move of
 * the first and a delete of the second (`file.created` ×2, `file.moved`, `file.deleted`). For each write, the
 * delay is the time from its answer reaching this process to its change reaching it in a follower's answer
 * (both read on this process's clock; a change can come in a poll answer that this process reads before the
 * write's own answer, hence a delay just below 0).
 *
 * A benchmark that prints figures, not a test: `npm run bench:feed -- [writes] [writers]` (defaults 400 and 4)
 * prints one JSON line: the delays' p50/p95/p99/max in ms, how many writes were matched to their change, and
 * the machine's load average and cores before and after (the machine is shared: read the figures with them).
 */
async function main(writes: number, writers: number): Promise<void> {
  const before = { loadavg: loadavg().map((value) => Number(value.toFixed(2))), cpus: cpus().length };
  const env = await startNpmStart();
  const base = env.url;
  const headers = { Authorization: `Bearer ${BENCH_KEY}` };
  const call = async (method: string, path: string, body?: string | FormData, type?: string): Promise<unknown> => {
    const res = await fetch(`${base}${path}`, { method, headers: { ...headers, ...(type ? { 'Content-Type': type } : {}) }, body });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as unknown;
  };
  try {
    const run = `/feed-delay-${Date.now()}`;
    await call('POST', '/drive/folders', JSON.stringify({ path: run }), 'application/json');
    // The cursor first, then the writes: every write's change comes after it (docs/api.md, "Changes").
    const { data: { cursor: first } } = (await call('GET', `/drive/changes/latest?${new URLSearchParams({ path: run })}`)) as { data: { cursor: string } };
    /** When each write's answer came (ms, this process's clock), by the key of the change it makes. */
    const answered = new Map<string, number>();
    /** When each change came to the follower. */
    const arrived = new Map<string, number>();
    let stop = false;
    const follower = (async () => {
      let cursor = first;
      // After the last write: on until every write's change came, or 10 empty polls in a row (then `missing`).
      for (let empty = 0; !stop || (empty < 10 && [...answered.keys()].some((key) => !arrived.has(key))); ) {
        const page = (await call('GET', `/drive/changes?${new URLSearchParams({ cursor, limit: '1000', timeout: stop ? '2' : '25' })}`)) as {
          data: { changes: { type: string; path: string }[]; next_cursor: string };
        };
        const at = performance.now();
        for (const change of page.data.changes) if (!arrived.has(`${change.type} ${change.path}`)) arrived.set(`${change.type} ${change.path}`, at);
        cursor = page.data.next_cursor;
        empty = page.data.changes.length === 0 ? empty + 1 : 0;
      }
    })();
    const upload = async (path: string) => {
      const form = new FormData();
      form.append('files', new Blob([`bytes of ${path}\n`]), 'x');
      form.append('metadata', JSON.stringify([{ path }]));
      await call('POST', '/drive/upload', form);
      answered.set(`file.created ${path}`, performance.now());
    };
    const rounds = Math.ceil(writes / 4 / writers);
    const writer = async (w: number) => {
      for (let r = 0; r < rounds; r++) {
        const a = `${run}/w${w}/r${r}-a.txt`;
        const b = `${run}/w${w}/r${r}-b.txt`;
        await upload(a);
        await upload(b);
        await call('POST', '/drive/move', JSON.stringify({ from: a, to: `${a}.moved` }), 'application/json');
        answered.set(`file.moved ${a}.moved`, performance.now());
        await call('DELETE', `/drive/files?${new URLSearchParams({ path: b })}`);
        answered.set(`file.deleted ${b}`, performance.now());
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    const wrote = performance.now() - started;
    stop = true;
    await follower;
    const delays = [...answered].flatMap(([key, at]) => (arrived.has(key) ? [arrived.get(key)! - at] : [])).sort((x, y) => x - y);
    const pct = (p: number) => Math.round(delays[Math.min(delays.length - 1, Math.ceil((p / 100) * delays.length) - 1)] ?? NaN);
    console.log(
      JSON.stringify({
        bench: 'change-feed-delay',
        writes: answered.size,
        writers,
        writesPerSecond: Number(((answered.size / wrote) * 1000).toFixed(1)),
        matched: delays.length,
        missing: answered.size - delays.length,
        delayMs: { min: Math.round(delays[0] ?? NaN), p50: pct(50), p95: pct(95), p99: pct(99), max: Math.round(delays.at(-1) ?? NaN), over2s: delays.filter((d) => d > 2000).length },
        machine: { before, after: { loadavg: loadavg().map((value) => Number(value.toFixed(2))) } },
      }),
    );
  } finally {
    await env.close();
  }
}

const [writes = '400', writers = '4'] = process.argv.slice(2);
main(Number(writes), Number(writers)).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
