import { createSocket } from 'node:dgram';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TRACES_FILE, startTraceCollector } from '../../trace-collector';

// The local host's X-Ray daemon keeps segment documents and nothing else, in a file that cannot grow without end.

let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'drive-traces-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

const lines = async (file: string) => (await readFile(join(dir, file), 'utf8').catch(() => '')).split('\n').filter(Boolean);

it('keeps each document sent as the daemon takes it, and drops whatever else arrives', async () => {
  const collector = await startTraceCollector(dir);
  const [host, port] = collector.address.split(':');
  const socket = createSocket('udp4');
  const sent = ['{"format":"json","version":1}\n{"name":"S3","id":"1"}', 'no header', '{"format":"json","version":1}\nnot json', '{"format":"json","version":1}\n[1,2]', '{"format":"json","version":1}\n{"name":"DynamoDB","id":"2"}'];
  for (const text of sent) await new Promise((resolve) => socket.send(text, Number(port), host, resolve));
  socket.close();
  for (let i = 0; i < 100 && (await lines(TRACES_FILE)).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  await collector.close();

  expect((await lines(TRACES_FILE)).map((line) => JSON.parse(line) as unknown)).toEqual([{ name: 'S3', id: '1' }, { name: 'DynamoDB', id: '2' }]);
});

it('turns the file over past its size, keeping one file before it', async () => {
  const collector = await startTraceCollector(dir, 1000);
  const segment = { name: 'x'.repeat(100) };
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 12; i++) collector.keep(segment);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await collector.close();

  const current = await lines(TRACES_FILE);
  const before = await lines('traces.1.jsonl');
  expect(before.length).toBeGreaterThan(0);
  expect(before.join('\n').length).toBeLessThan(2000);
  expect(current.join('\n').length).toBeLessThan(2000);
});

it('starts on a line of its own after a line a killed host cut short', async () => {
  await writeFile(join(dir, TRACES_FILE), '{"name":"whole"}\n{"name":"cut sh');
  const collector = await startTraceCollector(dir);
  collector.keep({ name: 'next' });
  await collector.close();

  const kept = await lines(TRACES_FILE);
  expect(kept[0]).toBe('{"name":"whole"}');
  expect(JSON.parse(kept.at(-1)!)).toEqual({ name: 'next' });
});

it('starts the file again empty when it cannot be set aside, rather than let it grow', async () => {
  await mkdir(join(dir, 'traces.1.jsonl'));
  const collector = await startTraceCollector(dir, 1000);
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 12; i++) collector.keep({ name: 'x'.repeat(100) });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await collector.close();
  await collector.close();

  expect((await readFile(join(dir, TRACES_FILE), 'utf8')).length).toBeLessThan(2000);
});
