import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DriveClient, type ListingJson, json } from '../support/api-client';
import { runFsck } from '../support/fsck';
import { type RunningHost, removeDataDir, startHost, storedState } from '../support/local-host';

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

/** Objects no record, session or journal entry names, as fsck counts them (grace 0: every one). */
async function orphansIn(dataDir: string): Promise<number> {
  return count((await runFsck(dataDir, '--grace-minutes', '0')).output, 'objects no record points to') || 0;
}

/** Every file's path and id below `folder`, as a recursive listing gives them (none if the folder is gone). */
async function filesBelow(drive: DriveClient, folder: string): Promise<string[]> {
  const listing = await json<{ data: ListingJson }>(drive.list({ folder, recursive: 'true' }));
  return listing.status === 200 ? listing.body.data.files.map((file) => `${file.path} ${file.id}`).sort() : [];
}

/**
 * The scheduled consistency check as the local host runs it (its timer at 1 s), with its default repair and
 * no grace period, on a quiet store: the host is started for it alone, and stopped once a run ended a pass
 * over the bucket with no orphan left awaiting its second confirmation (a run notes an orphan, a later one
 * deletes it). Answers how many objects those runs deleted as orphans.
 */
async function scheduledCheck(dataDir: string): Promise<number> {
  const host: RunningHost = await startHost({ ...env, DRIVE_LOCAL_FSCK_SECONDS: '1', DRIVE_FSCK_GRACE_MINUTES: '0' }, dataDir);
  try {
    for (;;) {
      const runs = host
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{') && text.includes('"collected"'))
        .map((text) => JSON.parse(text) as { collected: number; awaiting: number; findings: number; slice: { passDone: boolean } });
      const last = runs.findIndex((run) => run.slice.passDone && run.awaiting === 0);
      // Jest's timeout is the backstop; the timer runs each second.
      if (last >= 0) return runs.slice(0, last + 1).reduce((sum, run) => sum + run.collected, 0);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await host.stop();
  }
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
        // Each round on a drive of its own: a killed delete's job may still be running in a later round (its
        // queue message waits out its visibility on the next host), and a drive runs at most 4 jobs at once,
        // so a shared drive's delete could be refused (429) for the earlier rounds' jobs, not for this one.
        const roundEnv = { ...env, DRIVE_API_KEYS: `chaos-${round}:${KEY}-r${round}` };
        const roundKey = `${KEY}-r${round}`;
        let host = await startHost(roundEnv, dataDir);
        let drive = new DriveClient(host.url, roundKey);
        // A file outside the doomed folders: with no file record at all, the check deletes nothing (its brake).
        if (round === 0) expect((await drive.upload([{ data: 'kept', filename: 'kept.txt' }])).status).toBe(200);
        expect((await drive.upload(names.map((filename) => ({ data: filename, filename })), names.map(() => ({ folder })))).status).toBe(200);

        const send = (client: DriveClient) => [
          client.deleteFolder({ path: folder, recursive: 'true' }),
          ...replacing.map((filename) => client.upload([{ data: `new ${filename}`, filename }], [{ folder }])),
        ];
        const killed = Promise.all(send(drive).map((answer) => answer.catch(() => undefined)));
        await new Promise((resolve) => setTimeout(resolve, 30 + round * 50));
        expect(await host.stop('SIGKILL')).toBeNull();
        await killed;

        host = await startHost(roundEnv, dataDir);
        drive = new DriveClient(host.url, roundKey);
        let summary: string;
        let before: string[];
        try {
          const [deleted, ...uploaded] = await Promise.all(send(drive));
          expect([200, 404]).toContain(deleted.status);
          for (const answer of uploaded) expect([200, 409]).toContain(answer.status);
          // The uploads that won after the delete hold their folder; the rest went with it.
          before = await filesBelow(drive, folder);
          const stored = uploaded.filter((answer) => answer.status === 200).length;
          expect(before.length).toBeLessThanOrEqual(stored);
          summary = `delete ${deleted.status}, ${stored} of ${uploaded.length} uploads stored`;
        } finally {
          await host.stop();
        }
        // An upload of one file keeps no journal entry (docs/hot-path-design.md): one killed between its bytes
        // and its record leaves them named by nothing, for the scheduled check. So does one killed after it
        // withdrew its record from the doomed folder and before it freed the bytes: its own and those of the
        // file it replaced (freed in one call), so at most two objects each.
        const orphans = await orphansIn(dataDir);
        expect(orphans).toBeLessThanOrEqual(2 * replacing.length);
        const collected = await scheduledCheck(dataDir);
        expect(collected).toBe(orphans);
        const after = await expectClean(dataDir);
        // No record lost to the repair: the same files, by path and id.
        host = await startHost(roundEnv, dataDir);
        try {
          expect(await filesBelow(new DriveClient(host.url, roundKey), folder)).toEqual(before);
        } finally {
          await host.stop();
        }
        report.push(`round ${round}: ${summary}, ${orphans} objects of killed one-file uploads deleted by the scheduled check, ${after.inFlight} awaiting the sweep`);
      }
      console.log(`SIGKILL during a delete with replacing uploads: ${report.join('; ')}`);
    } finally {
      await removeDataDir(dataDir);
    }
  });

  // Two rounds: each starts a host four times and runs fsck four times besides its uploads.
  it('one-file uploads killed: the scheduled check deletes what they left, every record keeps its bytes (2 rounds)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'drive-chaos-'));
    const report: string[] = [];
    try {
      for (let round = 0; round < 2; round++) {
        const folder = `/one-${round}`;
        // Replacing files and new ones, each its own request: the hot path, no journal.
        const names = Array.from({ length: 30 }, (_, i) => `f-${String(i % 20).padStart(2, '0')}.bin`);
        const body = (i: number) => Buffer.alloc(16 * 1024, `${round}-${i}`);
        let host = await startHost(env, dataDir);
        let drive = new DriveClient(host.url, KEY);
        // A file that is stored whatever the kill does: the check deletes nothing while the table holds no file
        // record (its brake), and the kill may land before any upload's record.
        expect((await drive.upload([{ data: `kept ${round}`, filename: 'kept.txt' }], [{ folder: `/beside-${round}` }])).status).toBe(200);
        const baseline = (await storedState(dataDir)).objectKeys.length;
        const killed = Promise.all(names.map((filename, i) => drive.upload([{ data: body(i), filename }], [{ folder }]).catch(() => undefined)));
        // Killed once the uploads have begun to store bytes (a state, not a time): some have no record yet.
        while ((await storedState(dataDir)).objectKeys.length <= baseline + round) await new Promise((resolve) => setTimeout(resolve, 5));
        expect(await host.stop('SIGKILL')).toBeNull();
        await killed;

        // What the kill left: records (each with its bytes), and orphans of uploads killed before their record.
        host = await startHost(env, dataDir);
        drive = new DriveClient(host.url, KEY);
        let before: string[];
        try {
          before = await filesBelow(drive, folder);
        } finally {
          await host.stop();
        }
        const orphans = await orphansIn(dataDir);
        expect(orphans).toBeLessThanOrEqual(names.length);
        const collected = await scheduledCheck(dataDir);
        expect(collected).toBe(orphans);
        await expectClean(dataDir);

        // No record lost, and every one still downloads; then the same requests again all store.
        host = await startHost(env, dataDir);
        drive = new DriveClient(host.url, KEY);
        try {
          expect(await filesBelow(drive, folder)).toEqual(before);
          for (const entry of before) {
            const download = await drive.download({ path: entry.split(' ')[0] });
            expect([download.status, (await download.arrayBuffer()).byteLength]).toEqual([200, 16 * 1024]);
          }
          const again = await Promise.all(names.map((filename, i) => drive.upload([{ data: body(i), filename }], [{ folder }])));
          expect(again.map((answer) => answer.status)).toEqual(names.map(() => 200));
          expect(await filesBelow(drive, folder)).toHaveLength(20);
        } finally {
          await host.stop();
        }
        await expectClean(dataDir);
        report.push(`round ${round}: ${before.length} records after the kill, ${orphans} orphans deleted by the scheduled check`);
      }
      console.log(`SIGKILL during one-file uploads: ${report.join('; ')}`);
    } finally {
      await removeDataDir(dataDir);
    }
  });
});
