import { parseArgs } from 'node:util';
import { deleteFolder } from '../functions/core/delete-folder';
import { ensureFolders } from '../functions/core/folders';
import { type Findings, check, isClean } from '../functions/core/consistency';
import { type Storage, openStorage } from '../lib/fsck/storage';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `Usage: npm run fsck [-- --repair [--grace-minutes N]]
  Compares every record with the bucket and reports: records whose object is missing or differs in size or
  content hash, objects no record
  points to, folders whose parent is missing, nodes below a file, and deletes that were interrupted.
  Exits 1 when it finds a problem.
  --repair         delete orphaned objects older than the grace period, recreate missing parent folders,
                   finish interrupted deletes (deletes no other record)
  --grace-minutes  how old an orphaned object must be before --repair deletes it (default 60: an upload in
                   flight stores its bytes before its record)

Against a deployed stack: set DRIVE_NODES_TABLE, DRIVE_BUCKET and DRIVE_UPLOADS_TABLE (the stack outputs) and AWS credentials.
Otherwise the local data dir (DRIVE_DATA_DIR, default .drive-data), whether or not npm start is running.`;

/** `npm run fsck`: the consistency check of S3 against DynamoDB, and its repair. */
async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { repair: { type: 'boolean' }, 'grace-minutes': { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const graceMinutes = Number(values['grace-minutes'] ?? 60);
  if (!Number.isFinite(graceMinutes) || graceMinutes < 0) throw new Error('--grace-minutes must be a number of minutes');

  const storage = await openStorage();
  try {
    let findings = await inspect(storage);
    report(storage.where, findings);
    if (values.repair && !isClean(findings)) {
      await repair(storage, findings, graceMinutes);
      findings = await inspect(storage);
      console.log('\nAfter repair:');
      report(storage.where, findings);
    }
    return isClean(findings) ? 0 : 1;
  } finally {
    await storage.close();
  }
}

async function inspect(storage: Storage): Promise<Findings> {
  // Sessions first: a completion that records its object after this read finds that object named here.
  const pending = await storage.readSessionKeys();
  const [nodes, objects] = await Promise.all([storage.readNodes(), storage.readObjects()]);
  return check(nodes, objects, pending);
}

async function repair(storage: Storage, findings: Findings, graceMinutes: number): Promise<void> {
  const cutoff = Date.now() - graceMinutes * 60_000;
  const stale = findings.orphanedObjects.filter((object) => object.lastModified.getTime() < cutoff).map((object) => object.key);
  await storage.deleteObjects(stale);
  console.log(`\nRepair: deleted ${stale.length} orphaned objects older than ${graceMinutes} minutes (${findings.orphanedObjects.length - stale.length} younger ones kept).`);
  const now = new Date().toISOString();
  let recreated = 0;
  for (const { drive, path } of findings.missingParents) {
    try {
      await ensureFolders(storage.nodes, drive, [path], now);
      recreated++;
    } catch (error) {
      console.log(`Repair: could not recreate ${drive}:${path}: ${(error as Error).message}`);
    }
  }
  console.log(`Repair: recreated ${recreated} missing parent folders (with their own missing parents).`);
  let finished = 0;
  for (const { drive, node } of findings.interruptedDeletes) {
    try {
      const files = await deleteFolder({ nodes: storage.nodes, objects: storage.objects }, drive, node.path, true);
      console.log(`Repair: finished the delete of ${drive}:${node.path} (${files} more files)`);
      finished++;
    } catch (error) {
      console.log(`Repair: could not finish the delete of ${drive}:${node.path}: ${(error as Error).message}`);
    }
  }
  console.log(`Repair: finished ${finished} interrupted deletes.`);
}

function report(where: string, findings: Findings): void {
  const lines: [string, string[]][] = [
    ['records whose object is missing', findings.recordsWithoutObject.map(({ drive, node }) => `${drive}:${node.path}`)],
    [
      'records whose object differs (size or content hash)',
      findings.recordsNotMatchingObject.map(({ drive, node, object }) => `${drive}:${node.path} (record ${node.size} bytes ${node.etag}, object ${object.size} bytes ${object.etag ?? 'no ETag'})`),
    ],
    ['objects no record points to', findings.orphanedObjects.map((object) => `${object.key} (${object.lastModified.toISOString()})`)],
    ['objects of uploads in flight or interrupted (not a problem: the sweep deletes those no record claims)', findings.inFlight.map((object) => object.key)],
    ['folders whose parent is missing', findings.missingParents.map(({ drive, path, children }) => `${drive}:${path} (holds ${children.length})`)],
    ['nodes below a file', findings.belowFiles.map(({ drive, node }) => `${drive}:${node.path}`)],
    ['interrupted deletes', findings.interruptedDeletes.map(({ drive, node }) => `${drive}:${node.path}`)],
    ['trash items whose object is missing', findings.trashWithoutObject.map(({ drive, node, trash }) => `${drive}:${node.path} (trash ${trash?.row ?? ''})`)],
    ['trash items more than a day past their purge time', findings.trashOverdue.map(({ drive, node, trash }) => `${drive}:${node.path} (trash ${trash?.row ?? ''})`)],
  ];
  console.log(`fsck of ${where}: ${isClean(findings) ? 'clean' : 'problems found'}`);
  for (const [label, items] of lines) {
    console.log(`  ${String(items.length).padStart(6)}  ${label}`);
    for (const item of items.slice(0, 10)) console.log(`            ${item}`);
    if (items.length > 10) console.log(`            … and ${items.length - 10} more`);
  }
}

main(process.argv.slice(2)).then(
  // Exit once stdout has taken everything: a pipe's reader may be slower than this process (`| less`).
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    console.error(`fsck: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  },
);
