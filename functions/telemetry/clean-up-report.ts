import type { LeftBehind } from '../core/clean-up';
import { describeError, log, writeLine } from './log';
import { embeddedMetrics } from './metrics';
import { currentRequest } from './request-context';

/**
 * Logs a clean-up that failed with its cause and, when it left objects behind, those bucket keys and an
 * `OrphanedObjects` metric of their number in the same line (counted in the running request too).
 */
export function reportCleanUp(error: unknown, left: LeftBehind | undefined): void {
  const request = currentRequest();
  const fields = { request_id: request?.requestId, error: describeError(error) };
  if (!left || left.keys.length === 0) return log('WARN', 'clean-up failed', fields);
  // A multipart upload is no object yet: its parts are billed until the lifecycle rule aborts it.
  const orphaned = left.uploadId === undefined ? left.keys.length : 0;
  if (request) request.orphanedObjects += orphaned;
  // Written whatever the level: the line carries the metric an alarm watches.
  writeLine({
    timestamp: new Date().toISOString(),
    level: 'WARN',
    message: left.uploadId === undefined ? 'clean-up failed; these objects are orphaned until fsck --repair deletes them' : 'clean-up failed; this multipart upload stays until the bucket lifecycle rule aborts it',
    ...fields,
    orphaned_keys: left.keys,
    ...(left.uploadId === undefined ? {} : { upload_id: left.uploadId }),
    ...embeddedMetrics({ orphanedObjects: orphaned }),
  });
}
