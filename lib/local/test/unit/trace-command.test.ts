import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// `npm run trace` reads what the local host's daemon kept, whatever state a stopped host left it in.

const ROOT = resolve(__dirname, '..', '..', '..', '..');
const TRACE = '1-6b06f97c-b0da08e98c8eb49bf83aedd5';
let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'drive-trace-cmd-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

const invocation = { name: 'drive-upload', id: 'aaaaaaaaaaaaaaaa', trace_id: TRACE, origin: 'AWS::Lambda::Function', start_time: 1000, end_time: 1000.5, http: { request: { method: 'POST', url: '/drive/upload' }, response: { status: 200 } } };
const call = (i: number, name = 'DynamoDB') => ({ name, id: i.toString(16).padStart(16, '0'), trace_id: TRACE, parent_id: invocation.id, type: 'subsegment', namespace: 'aws', start_time: 1000 + i / 1000, end_time: 1000 + i / 1000 + 0.0005, aws: { operation: 'PutItem', region: 'us-east-1', request_id: 'X'.repeat(52), retries: 0 }, http: { response: { status: 200 } } });
const jsonl = (documents: object[]) => documents.map((d) => JSON.stringify(d)).join('\n');

/** The command's output, read through a pipe; `slowReader`: one that starts reading a second late, as `| (sleep 1; wc -l)` does. */
function trace(args: string[], slowReader = false): Promise<{ code: number | null; stdout: string }> {
  return new Promise((done) => {
    const command = [process.execPath, '--import', 'tsx', 'bin/trace.ts', ...args];
    const env = { ...process.env, DRIVE_DATA_DIR: dir };
    const child = slowReader
      ? spawn('bash', ['-c', `${command.map((word) => `'${word}'`).join(' ')} | (sleep 1; cat)`], { cwd: ROOT, env })
      : spawn(command[0], command.slice(1), { cwd: ROOT, env });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('close', (code) => done({ code, stdout }));
  });
}

it('prints a whole trace of the most subsegments an invocation sends, none lost to the pipe', async () => {
  await writeFile(join(dir, 'traces.jsonl'), `${jsonl([invocation, ...Array.from({ length: 200 }, (_, i) => call(i))])}\n`);

  const json = await trace([TRACE, '--json'], true);
  const shown = await trace([], true);

  expect(json.code).toBe(0);
  expect(json.stdout.split('\n').filter(Boolean)).toHaveLength(201);
  expect(shown.stdout.split('\n').filter((line) => line.includes('DynamoDB PutItem → 200'))).toHaveLength(200);
});

it('reads the file set aside and the current one, though the older ends without a newline', async () => {
  await writeFile(join(dir, 'traces.1.jsonl'), jsonl([invocation]));
  await writeFile(join(dir, 'traces.jsonl'), `${jsonl([call(1, 'S3')])}\n`);

  const shown = await trace([TRACE]);

  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain('drive-upload POST /drive/upload → 200');
  expect(shown.stdout).toContain('S3 PutItem → 200');
});

it('shows the names any local process may send as text, never as terminal control codes', async () => {
  await writeFile(join(dir, 'traces.jsonl'), `${jsonl([{ ...invocation, name: 'evil\u001b]0;owned\u0007\u001b[2J' }])}\n`);

  const shown = await trace([TRACE]);

  expect(shown.stdout).toContain('evil?]0;owned??[2J');
  expect(shown.stdout).not.toMatch(/[\u001b\u0007]/);
});

it('says so, and exits 1, when there is no such trace or none at all', async () => {
  expect(await trace([])).toMatchObject({ code: 1 });
  await writeFile(join(dir, 'traces.jsonl'), `${jsonl([invocation])}\n`);
  expect(await trace(['1-00000000-000000000000000000000000'])).toMatchObject({ code: 1 });
});
