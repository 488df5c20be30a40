import { Writable } from 'node:stream';
import { mvCpCommand } from '../../src/cli/mv-cp-command';
import { Output } from '../../src/cli/output';
import { Drive } from '../../src/drive';
import { FakeClock, fakeFetch, jsonResponse } from '../support/fakes';

const BASE = 'http://drive.test';

/** An Output whose stdout and stderr are kept as text. */
function capture(json: boolean) {
  const text = { stdout: '', stderr: '' };
  const sink = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        text[name] += chunk.toString();
        done();
      },
    }) as unknown as NodeJS.WriteStream;
  return { out: new Output({ stdout: sink('stdout'), stderr: sink('stderr'), env: {} }, json), text };
}

const job = (status: 'running' | 'done', files: number, end: object = {}) => ({
  id: 'j1', type: 'copy-folder', status, path: '/from', to: '/to', files_copied: files,
  created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:01.000Z', url: `${BASE}/drive/jobs/j1`, result: null, ...end,
});

function driveAnswering(answers: Response[]) {
  const fetcher = fakeFetch((_, i) => answers[i]);
  return { fetcher, drive: new Drive({ baseUrl: BASE, apiKey: 'k', fetch: fetcher, clock: new FakeClock() }) };
}

const command = (name: 'mv' | 'cp', overwrite = false) => ({ name, from: '/from', to: '/to', overwrite, json: false });

describe('Function: mvCpCommand', () => {
  it('moves a file and says where it went; --json prints the entry alone', async () => {
    // Prepare
    const entry = { id: 'f1', name: 'to', path: '/to', size: 3, created_at: '2026-01-01T00:00:00.000Z' };
    const plain = capture(false);
    const json = capture(true);

    // Act
    const codes = [
      await mvCpCommand(command('mv'), driveAnswering([jsonResponse(200, { data: entry })]).drive, plain.out, new AbortController().signal),
      await mvCpCommand({ ...command('mv'), json: true }, driveAnswering([jsonResponse(200, { data: entry })]).drive, json.out, new AbortController().signal),
    ];

    // Assess
    expect(codes).toEqual([0, 0]);
    expect(plain.text).toEqual({ stdout: 'moved /from -> /to\n', stderr: '' });
    expect(JSON.parse(json.text.stdout)).toEqual(entry);
    expect(json.text.stderr).toBe('');
  });

  it("follows a folder's copy job, saying once that it goes on and then each time its count moves", async () => {
    // Prepare
    const folder = { id: 'd1', name: 'to', path: '/to' };
    const { drive, fetcher } = driveAnswering([
      jsonResponse(202, { data: { job: job('running', 0) } }),
      jsonResponse(200, { data: { job: job('running', 0) } }),
      jsonResponse(200, { data: { job: job('running', 500) } }),
      jsonResponse(200, { data: { job: job('done', 800, { result: folder }) } }),
    ]);
    const { out, text } = capture(false);

    // Act
    const code = await mvCpCommand(command('cp', true), drive, out, new AbortController().signal);

    // Assess
    expect(code).toBe(0);
    expect(text.stderr).toBe('/from is being copied to /to (job j1): 0 file(s) so far\n  500 file(s) copied\n');
    expect(text.stdout).toBe('copied /from -> /to/\n');
    expect(JSON.parse(await fetcher.requests[0].body!.text())).toEqual({ from: '/from', to: '/to', overwrite: true });
  });

  it('rejects with the error of a job that stopped short, and names the -f flag where the API names its field', async () => {
    const stopped = driveAnswering([
      jsonResponse(202, { data: { job: job('running', 0) } }),
      jsonResponse(200, { data: { job: job('done', 3, { error: { code: 'conflict', message: 'the copy stopped' } }) } }),
    ]);
    const taken = driveAnswering([jsonResponse(409, { error: { code: 'conflict', message: '/to is taken; pass "overwrite": true to replace the file there' } })]);

    await expect(mvCpCommand(command('cp'), stopped.drive, capture(false).out, new AbortController().signal)).rejects.toMatchObject({ code: 'conflict', status: 409, message: 'the copy stopped' });
    await expect(mvCpCommand(command('mv'), taken.drive, capture(false).out, new AbortController().signal)).rejects.toMatchObject({
      code: 'conflict',
      status: 409,
      message: '/to is taken; pass -f to replace the file there',
    });
  });
});
