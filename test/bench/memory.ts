import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DynamoNodeStore } from '../../functions/aws/dynamo-node-store';
import { LOCAL_REGION, LOCAL_RESOURCES, localCredentials } from '../../lib/local/emulators';
import { removeDataDir, startHost } from '../support/local-host';

const KEY = 'memory-key-29hVHaTbDrEgNFVFcigNCYZW';

export interface MemoryResult {
  fileBytes: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  growthMiB: number;
  seconds: number;
}

/** Resident memory of a separate `npm start` process while a client downloads a file of `mib` MiB. */
export async function measureDownloadMemory(mib: number): Promise<MemoryResult> {
  const host = await startHost({ DRIVE_API_KEYS: `memory:${KEY}`, DRIVE_RATE_LIMITS: 'off' });
  try {
    const endpoints = JSON.parse(await readFile(join(host.dataDir, 'endpoints.json'), 'utf8')) as { pid: number; s3: string; dynamodb: string };
    const config = { region: LOCAL_REGION, credentials: await localCredentials(host.dataDir) };
    const s3 = new S3Client({ ...config, endpoint: endpoints.s3, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });
    const dynamodb = new DynamoDBClient({ ...config, endpoint: endpoints.dynamodb });
    const size = mib * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const body = Readable.from((function* () {
      for (let i = 0; i < mib; i++) yield chunk;
    })());
    // Through the SDK: one API request carries at most 4.5 MiB.
    await new Upload({ client: s3, params: { Bucket: LOCAL_RESOURCES.bucket, Key: 'memory/big', Body: body } }).done();
    await new DynamoNodeStore(dynamodb, LOCAL_RESOURCES.nodesTable).putFile('memory', {
      kind: 'file', id: 'big', path: '/big.bin', size, contentType: 'application/octet-stream', createdAt: new Date().toISOString(), objectKey: 'memory/big', etag: 'big',
    });
    s3.destroy();
    dynamodb.destroy();

    // Warm the download path once, then measure a full download.
    await (await fetch(`${host.url}/drive/download?path=/missing`, { headers: { Authorization: `Bearer ${KEY}` } })).arrayBuffer();
    const before = await rssMiB(endpoints.pid);
    let peak = before;
    const sampler = setInterval(() => void rssMiB(endpoints.pid).then((rss) => (peak = Math.max(peak, rss))), 20);
    const started = Date.now();
    const res = await fetch(`${host.url}/drive/download?path=/big.bin`, { headers: { Authorization: `Bearer ${KEY}` } });
    let received = 0;
    for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) received += part.length;
    clearInterval(sampler);
    if (received !== size) throw new Error(`downloaded ${received} of ${size} bytes`);
    return { fileBytes: size, rssBeforeMiB: before, rssPeakMiB: peak, growthMiB: peak - before, seconds: (Date.now() - started) / 1000 };
  } finally {
    await host.stop();
    await removeDataDir(host.dataDir);
  }
}

/** A process's resident memory in MiB; 0 once it has exited (a zombie's status has no VmRSS line, a reaped one no file). */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb === undefined ? 0 : Number(kb) / 1024;
}
