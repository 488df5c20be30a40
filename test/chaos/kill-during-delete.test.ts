import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DriveClient } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { removeDataDir, startHost } from '../support/local-host';
import { FINAL_DELETES } from '../support/trash';

const KEY = 'chaos-kill-key-HUjHPIBAxHnYhF53JE196';
const ROUNDS = 3;

const count = (output: string, label: string) => Number(new RegExp(`(\\d+)  ${label}`).exec(output)?.[1]);

describe('SIGKILL in the middle of a recursive delete of 1,000 files', () => {
  it(`leaves nothing half-visible, and a second delete after a restart finishes the job (${ROUNDS} rounds)`, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'drive-chaos-'));
    const outcomes: string[] = [];
    // Final deletes: the rounds check the bytes go before the records (with the trash on, a delete keeps them).
    const env = { ...FINAL_DELETES, DRIVE_API_KEYS: `chaos:${KEY}`, DRIVE_RATE_LIMITS: 'off' };
    try {
      for (let round = 0; round < ROUNDS; round++) {
        let host = await startHost(env, dataDir);
        let drive = new DriveClient(host.url, KEY);
        const root = `/doomed-${round}`;
        for (let batch = 0; batch < 50; batch++) {
          const files = Array.from({ length: 20 }, (_, i) => ({ data: `${batch}-${i}`, filename: `f-${batch}-${i}.txt` }));
          expect((await drive.upload(files, files.map(() => ({ folder: `${root}/${batch % 10}` })))).status).toBe(200);
        }

        const pending = drive.deleteFolder({ path: root, recursive: 'true' }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 30 + round * 40));
        expect(await host.stop('SIGKILL')).toBeNull();
        await pending;

        host = await startHost(env, dataDir);
        drive = new DriveClient(host.url, KEY);
        try {
          // From the moment the delete took it, the folder is gone for readers, finished or not. On a loaded
          // machine the kill may come before the request reached its handler: then the folder is whole.
          const listed = await drive.list({ folder: root, recursive: 'true' });
          const untouched = listed.status === 200;
          if (untouched) expect(((await listed.json()) as { data: { files: unknown[] } }).data.files).toHaveLength(1000);
          else expect(listed.status).toBe(404);
          const interrupted = await runFsck(dataDir);
          const interruptedDeletes = count(interrupted.output, 'interrupted deletes');
          outcomes.push(untouched ? 'killed before the delete took the folder' : interruptedDeletes === 1 ? 'killed mid-delete' : 'killed after the delete finished');
          expect(count(interrupted.output, 'records whose object is missing')).toBe(0);
          expect(count(interrupted.output, 'objects no record points to')).toBe(0);
          expect(count(interrupted.output, 'folders whose parent is missing')).toBe(0);
          expect(count(interrupted.output, 'nodes below a file')).toBe(0);

          const second = await drive.deleteFolder({ path: root, recursive: 'true' });
          expect([200, 404]).toContain(second.status);
          expect((await drive.list({ folder: root })).status).toBe(404);
          // Bytes go before records: whatever point the kill came at, the second delete leaves nothing behind.
          const after = await runFsck(dataDir);
          expect({ code: after.code, orphans: count(after.output, 'objects no record points to') }).toEqual({ code: 0, orphans: 0 });
        } finally {
          await host.stop();
        }
      }
      console.log(`SIGKILL rounds: ${outcomes.join('; ')}`);
    } finally {
      await removeDataDir(dataDir);
    }
  });
});
