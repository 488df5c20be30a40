import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DriveClient, type ListingJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { removeDataDir, startHost } from '../support/local-host';

// SIGKILL at moments spread over the work, then a restart, the same requests again, and fsck: what an
// interruption leaves (functions/core/ports.ts) must be nothing that fsck counts as a problem.

const KEY = 'chaos-writes-key-AbJ9eQiGKwZ4ujW4Oc7R';
const ROUNDS = 4;
const env = { DRIVE_API_KEYS: `chaos:${KEY}`, DRIVE_RATE_LIMITS: 'off' };

const count = (output: string, label: string) => Number(new RegExp(`(\\d+)  ${label}`).exec(output)?.[1]);

/** fsck of `dataDir` finds no problem: no orphan, no record a listing cannot reach, none without bytes. */
async function expectClean(dataDir: string): Promise<{ inFlight: number }> {
  const fsck = await runFsck(dataDir);
  for (const label of ['records whose object is missing', 'objects no record points to', 'folders whose parent is missing', 'nodes below a file', 'interrupted deletes']) {
    const found = count(fsck.output, label);
    expect({ label, found, output: found === 0 ? '' : fsck.output }).toEqual({ label, found: 0, output: '' });
  }
  expect(fsck.code).toBe(0);
  return { inFlight: count(fsck.output, 'objects of uploads in flight or interrupted') };
}

describe('SIGKILL during writes', () => {
  it(`uploads into new 8-level paths, killed and sent again: every file reachable, nothing orphaned (${ROUNDS} rounds)`, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'drive-chaos-'));
    const report: string[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const requests = Array.from({ length: 6 }, (_, u) => {
          const files = Array.from({ length: 40 }, (__, i) => ({ data: `${round}-${u}-${i}`, filename: `f${i}.txt` }));
          const targets = files.map((_f, i) => ({ folder: `/r${round}/u${u}/${i}/a/b/c/d/e` }));
          return { files, targets };
        });
        let host = await startHost(env, dataDir);
        let drive = new DriveClient(host.url, KEY);
        const killed = Promise.all(requests.map(({ files, targets }) => drive.upload(files, targets).catch(() => undefined)));
        await new Promise((resolve) => setTimeout(resolve, 40 + round * 60));
        expect(await host.stop('SIGKILL')).toBeNull();
        await killed;

        host = await startHost(env, dataDir);
        drive = new DriveClient(host.url, KEY);
        try {
          const interrupted = await expectClean(dataDir);
          const again = await Promise.all(requests.map(({ files, targets }) => drive.upload(files, targets)));
          expect(again.map((answer) => answer.status)).toEqual(requests.map(() => 200));
          const listing = await json<{ data: ListingJson }>(drive.list({ folder: `/r${round}`, recursive: 'true' }));
          expect(listing.body.data.files).toHaveLength(6 * 40);
          const after = await expectClean(dataDir);
          report.push(`round ${round}: ${interrupted.inFlight} objects of killed uploads awaiting the sweep, then ${after.inFlight}`);
        } finally {
          await host.stop();
        }
      }
      console.log(`SIGKILL during uploads: ${report.join('; ')}`);
    } finally {
      await removeDataDir(dataDir);
    }
  });

  it(`a recursive delete with uploads replacing its files, killed and sent again: nothing orphaned (${ROUNDS} rounds)`, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'drive-chaos-'));
    const report: string[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const folder = `/doomed-${round}`;
        const names = Array.from({ length: 300 }, (_, i) => `f-${String(i).padStart(3, '0')}.txt`);
        const replacing = names.filter((_, i) => i % 30 === 7);
        let host = await startHost(env, dataDir);
        let drive = new DriveClient(host.url, KEY);
        expect((await drive.upload(names.map((filename) => ({ data: filename, filename })), names.map(() => ({ folder })))).status).toBe(200);

        const send = (client: DriveClient) => [
          client.deleteFolder({ path: folder, recursive: 'true' }),
          ...replacing.map((filename) => client.upload([{ data: `new ${filename}`, filename }], [{ folder }])),
        ];
        const killed = Promise.all(send(drive).map((answer) => answer.catch(() => undefined)));
        await new Promise((resolve) => setTimeout(resolve, 30 + round * 50));
        expect(await host.stop('SIGKILL')).toBeNull();
        await killed;

        host = await startHost(env, dataDir);
        drive = new DriveClient(host.url, KEY);
        try {
          const [deleted, ...uploaded] = await Promise.all(send(drive));
          expect([200, 404]).toContain(deleted.status);
          for (const answer of uploaded) expect([200, 409]).toContain(answer.status);
          // The uploads that won after the delete hold their folder; the rest went with it.
          const listing = await json<{ data: ListingJson }>(drive.list({ folder, recursive: 'true' }));
          const stored = uploaded.filter((answer) => answer.status === 200).length;
          if (listing.status === 200) expect(listing.body.data.files.length).toBeLessThanOrEqual(stored);
          const after = await expectClean(dataDir);
          report.push(`round ${round}: delete ${deleted.status}, ${stored} of ${uploaded.length} uploads stored, ${after.inFlight} objects awaiting the sweep`);
        } finally {
          await host.stop();
        }
      }
      console.log(`SIGKILL during a delete with replacing uploads: ${report.join('; ')}`);
    } finally {
      await removeDataDir(dataDir);
    }
  });
});
