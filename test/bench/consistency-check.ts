import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_REGION, LOCAL_RESOURCES, startEmulators } from '../../lib/local/emulators';
import { Seeder } from './seed';

/**
 * `node --import tsx test/bench/consistency-check.ts <files>`: seeds that many files (in 100 folders, 1-byte
 * objects) into fresh embedded emulators and times one run of the scheduled check's handler, called as the
 * local host calls it. Prints one JSON line: files, objects listed, nodes held, milliseconds. One size a
 * process: the handler's modules build their clients from the environment once, when first imported.
 */
async function main(files: number): Promise<void> {
  {
    const dataDir = await mkdtemp(join(tmpdir(), 'drive-fsck-bench-'));
    const emulators = await startEmulators(dataDir);
    const config = { region: LOCAL_REGION, credentials: emulators.credentials };
    const s3 = new S3Client({ ...config, endpoint: emulators.s3Endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });
    const dynamodb = new DynamoDBClient({ ...config, endpoint: emulators.dynamodbEndpoint });
    try {
      await new Seeder(s3, dynamodb, LOCAL_RESOURCES.bucket, LOCAL_RESOURCES.nodesTable).tree('bench', '/data', 100, Math.ceil(files / 100), 1);
      Object.assign(process.env, {
        AWS_REGION: LOCAL_REGION,
        AWS_ACCESS_KEY_ID: emulators.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: emulators.credentials.secretAccessKey,
        DRIVE_DYNAMODB_ENDPOINT: emulators.dynamodbEndpoint,
        DRIVE_S3_ENDPOINT: emulators.s3Endpoint,
        DRIVE_NODES_TABLE: LOCAL_RESOURCES.nodesTable,
        DRIVE_ACCESS_TABLE: LOCAL_RESOURCES.accessTable,
        DRIVE_BUCKET: LOCAL_RESOURCES.bucket,
        DRIVE_UPLOADS_TABLE: LOCAL_RESOURCES.uploadsTable,
      });
      const { handler } = await import('../../functions/consistency-check.js');
      const log = console.log;
      console.log = () => undefined; // the handler's own lines
      const started = performance.now();
      const report = await handler().finally(() => (console.log = log));
      console.log(JSON.stringify({ files, objects: report.objects, nodes: report.nodes, passDone: report.passDone, milliseconds: Math.round(performance.now() - started) }));
    } finally {
      s3.destroy();
      dynamodb.destroy();
      await emulators.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
}

const files = Number(process.argv[2]);
if (!(files > 0)) throw new Error('usage: node --import tsx test/bench/consistency-check.ts <files>');
main(files).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
