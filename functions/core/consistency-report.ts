import { type RepairMode, type SliceReport, findingsCount } from './consistency-check';

/** How many keys or paths of each kind of finding the log line names; the counts are whole. */
export const NAMED_PER_KIND = 50;

/**
 * The run as one JSON log line: counts, and the first `NAMED_PER_KIND` of each kind of finding by name; the
 * orphans it deleted (`collected`) apart, since they are repaired, not problems.
 */
export function logLine(report: SliceReport, milliseconds: number, repair: RepairMode) {
  const { findings } = report;
  const named = {
    orphanedObjects: findings.orphanedObjects.map((object) => `${object.key} (${object.size} bytes, ${object.lastModified.toISOString()})`),
    recordsWithoutObject: findings.recordsWithoutObject.map(({ drive, node }) => `${drive}:${node.path} (${node.kind === 'file' ? node.objectKey : ''})`),
    recordsNotMatchingObject: findings.recordsNotMatchingObject.map(
      ({ drive, node, object }) => `${drive}:${node.path} (record ${node.size} bytes ${node.etag}, object ${object.size} bytes ${object.etag ?? 'no ETag'})`,
    ),
    missingParents: findings.missingParents.map(({ drive, path, children }) => `${drive}:${path} (holds ${children.length})`),
    belowFiles: findings.belowFiles.map(({ drive, node }) => `${drive}:${node.path}`),
    interruptedDeletes: findings.interruptedDeletes.map(({ drive, node }) => `${drive}:${node.path}`),
    trashWithoutObject: findings.trashWithoutObject.map(({ drive, node, trash }) => `${drive}:${node.path} (trash ${trash?.row ?? ''})`),
    trashOverdue: findings.trashOverdue.map(({ drive, node, trash }) => `${drive}:${node.path} (trash ${trash?.row ?? ''}, purge at ${trash?.purgeAt ?? ''})`),
  };
  const count = findingsCount(findings);
  return {
    level: count > 0 ? 'warn' : 'info',
    message: count > 0 ? 'consistency check found problems' : 'consistency check clean',
    slice: { after: report.from ?? null, through: report.to ?? null, passDone: report.passDone },
    objects: report.objects,
    nodes: report.nodes,
    findings: count,
    counts: Object.fromEntries(Object.entries(named).map(([kind, list]) => [kind, list.length])),
    named: Object.fromEntries(Object.entries(named).filter(([, list]) => list.length > 0).map(([kind, list]) => [kind, list.slice(0, NAMED_PER_KIND)])),
    collected: report.collected.length,
    ...(report.collected.length > 0 ? { collectedObjects: report.collected.slice(0, NAMED_PER_KIND).map((object) => `${object.key} (${object.size} bytes, ${object.lastModified.toISOString()})`) } : {}),
    recentUnreferenced: report.recentUnreferenced,
    awaiting: report.awaiting,
    ...(report.withheld === undefined ? {} : { withheld: report.withheld }),
    inFlight: report.inFlight,
    repair,
    ...(report.repaired
      ? {
          repaired: {
            deletedObjects: report.repaired.deletedObjects.length,
            ...(report.repaired.deleteFailed === undefined ? {} : { deleteFailed: report.repaired.deleteFailed }),
            recreatedFolders: report.repaired.recreatedFolders.slice(0, NAMED_PER_KIND),
            notRecreated: report.repaired.notRecreated.slice(0, NAMED_PER_KIND),
          },
        }
      : {}),
    milliseconds,
  };
}

/** The run's counts in CloudWatch's embedded metric format: namespace `Drive`, one dimension, the bucket. */
export function metricsLine(report: SliceReport, milliseconds: number, bucketName: string, at: Date) {
  const { findings } = report;
  const values: Record<string, [number, 'Count' | 'Milliseconds']> = {
    ConsistencyCheckRuns: [1, 'Count'],
    ConsistencyFindings: [findingsCount(findings), 'Count'],
    OrphanedObjects: [findings.orphanedObjects.length, 'Count'],
    RecordsWithoutObject: [findings.recordsWithoutObject.length, 'Count'],
    RecordsNotMatchingObject: [findings.recordsNotMatchingObject.length, 'Count'],
    MissingParents: [findings.missingParents.length, 'Count'],
    NodesBelowFiles: [findings.belowFiles.length, 'Count'],
    InterruptedDeletes: [findings.interruptedDeletes.length, 'Count'],
    TrashWithoutObject: [findings.trashWithoutObject.length, 'Count'],
    TrashOverdue: [findings.trashOverdue.length, 'Count'],
    ObjectsChecked: [report.objects, 'Count'],
    // Orphans deleted (a killed upload's bytes): repaired, so counted here and not in ConsistencyFindings.
    RepairedObjects: [report.repaired?.deletedObjects.length ?? 0, 'Count'],
    ConsistencyCheckTime: [milliseconds, 'Milliseconds'],
  };
  return {
    _aws: {
      Timestamp: at.getTime(),
      CloudWatchMetrics: [{ Namespace: 'Drive', Dimensions: [['Bucket']], Metrics: Object.entries(values).map(([Name, [, Unit]]) => ({ Name, Unit })) }],
    },
    Bucket: bucketName,
    ...Object.fromEntries(Object.entries(values).map(([name, [value]]) => [name, value])),
  };
}
