import { describeError, log, writeLine } from '../telemetry/log';
import { embeddedMetrics } from '../telemetry/metrics';
import { currentRequest } from '../telemetry/request-context';

/** What a failed clean-up leaves in the bucket: objects no record points to, or an unfinished multipart upload. */
export interface LeftBehind {
  /** The bucket keys of the objects (or of the multipart upload) the step would have removed. */
  keys: readonly string[];
  /** The multipart upload the step would have aborted (the bucket's lifecycle rule aborts it after a day). */
  uploadId?: string;
}

/**
 * Runs a clean-up step whose failure must not hide the outcome being reported; what it leaves behind, fsck
 * finds. A failure is logged with its cause and, when `leftBehind` says what the step would have removed
 * (read when it fails, so a step may fill it in as it goes), with those bucket keys and an `OrphanedObjects`
 * metric of their number, in the same line.
 */
export async function cleanUp(step: () => Promise<unknown>, leftBehind?: () => LeftBehind): Promise<void> {
  try {
    await step();
  } catch (error) {
    const left = leftBehind?.();
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
}
