import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { localCredentials } from '../../lib/local/emulators';
import { DriveClient, type FileJson, json } from '../support/api-client';
import { type RunningHost, startHost, stopHost, storedState, untilHost } from '../support/local-host';

// The scheduled consistency check as the local host runs it: the handler module on a timer of its own.

const KEY = 'fsck-sched-key-HUjHPIBAxHnYhF53JE196';
const ORPHAN = 'sched/no-record';
/** The host runs the check every second; no grace period, so a fresh orphan counts (and is deleted unless DRIVE_FSCK_REPAIR=off). */
const ENV = { DRIVE_API_KEYS: `sched:${KEY}`, DRIVE_RATE_LIMITS: 'off', DRIVE_LOCAL_FSCK_SECONDS: '1', DRIVE_FSCK_GRACE_MINUTES: '0' };

type Line = Record<string, unknown> & { message?: string; named?: Record<string, string[]>; counts?: Record<string, number> };

/** The JSON lines the host has printed so far. */
function jsonLines(host: RunningHost): Line[] {
  return host.output().split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Line];
    } catch {
      return [];
    }
  });
}

/** Polls the host's output until a line after the first `from` matches (a run each second); its index and the line after it. */
async function waitForLine(host: RunningHost, matches: (line: Line) => boolean, from = 0): Promise<{ line: Line; index: number; next?: Line }> {
  let found: { line: Line; index: number; next?: Line } | undefined;
  await untilHost(
    host,
    () => {
      const lines = jsonLines(host);
      const index = lines.findIndex((line, i) => i >= from && matches(line));
      // The handler prints its metric line right after its log line.
      if (index >= 0 && index + 1 < lines.length) found = { line: lines[index], index, next: lines[index + 1] };
      return found !== undefined;
    },
    'such a line',
  );
  return found!;
}

/** Puts an object into the running host's embedded S3 behind the API's back. */
async function putStrayObject(dataDir: string, key: string): Promise<void> {
  const endpoints = JSON.parse(await readFile(join(dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
  const s3 = new S3Client({ endpoint: endpoints.s3, region: 'us-east-1', credentials: await localCredentials(dataDir), forcePathStyle: true });
  try {
    await s3.send(new PutObjectCommand({ Bucket: endpoints.bucket, Key: key, Body: 'stray' }));
  } finally {
    s3.destroy();
  }
}

let host: RunningHost | undefined;

afterEach(async () => {
  if (host) await stopHost(host);
  host = undefined;
});

describe('the scheduled consistency check on the local host', () => {
  it('reports an orphaned object by name with its metric line when DRIVE_FSCK_REPAIR=off, and by default deletes it as repaired, not as a finding', async () => {
    // Prepare: a file through the API, and an object no record points to; the check only reports.
    host = await startHost({ ...ENV, DRIVE_FSCK_REPAIR: 'off' });
    const drive = new DriveClient(host.url, KEY);
    const uploaded = await json<{ data: FileJson[] }>(drive.upload([{ data: 'kept', filename: 'kept.txt' }], [{ folder: '/docs' }]));
    expect(uploaded.status).toBe(200);
    await putStrayObject(host.dataDir, ORPHAN);

    // Act: the host's timer runs the check.
    const { line: found, next: metric } = await waitForLine(host, (line) => line.named?.orphanedObjects?.some((name) => name.startsWith(`${ORPHAN} `)) === true);

    // Assess: the finding, named, and the metric line printed after it (the alarm's figure).
    expect(found).toMatchObject({ level: 'warn', message: 'consistency check found problems', findings: 1, collected: 0, repair: 'off' });
    expect(found.counts).toMatchObject({ orphanedObjects: 1, recordsWithoutObject: 0, missingParents: 0 });
    expect(metric).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Namespace: 'Drive', Dimensions: [['Bucket']] }] },
      ConsistencyFindings: 1,
      OrphanedObjects: 1,
      RecordsWithoutObject: 0,
      ConsistencyCheckRuns: 1,
      RepairedObjects: 0,
    });
    // Without repair, nothing is deleted.
    expect((await storedState(host.dataDir)).objectKeys).toContain(ORPHAN);

    // Act: the same data dir, DRIVE_FSCK_REPAIR unset (the default: orphans).
    const dataDir = host.dataDir;
    await host.stop();
    host = await startHost(ENV, dataDir);
    const collected = await waitForLine(host, (line) => line.collected === 1);
    const { line: clean } = await waitForLine(host, (line) => line.message === 'consistency check clean', collected.index + 1);

    // Assess: the orphan deleted and counted as repaired, not as a finding (no alarm); the uploaded file stays.
    expect(collected.line).toMatchObject({ level: 'info', findings: 0, repair: 'orphans', repaired: { deletedObjects: 1 }, collectedObjects: [expect.stringMatching(new RegExp(`^${ORPHAN} `))] });
    expect(collected.next).toMatchObject({ ConsistencyFindings: 0, OrphanedObjects: 0, RepairedObjects: 1 });
    expect(clean).toMatchObject({ findings: 0, collected: 0 });
    const state = await storedState(host.dataDir);
    expect(state.objectKeys).not.toContain(ORPHAN);
    expect(state.objectKeys).toContain(`sched/${uploaded.body.data[0].id}`);
    expect(await (await new DriveClient(host.url, KEY).download({ path: '/docs/kept.txt' })).text()).toBe('kept');
  });
});
