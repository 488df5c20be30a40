/** What a failed clean-up leaves in the bucket: objects no record points to, or an unfinished multipart upload. */
export interface LeftBehind {
  /** The bucket keys of the objects (or of the multipart upload) the step would have removed. */
  keys: readonly string[];
  /** The multipart upload the step would have aborted (the bucket's lifecycle rule aborts it after a day). */
  uploadId?: string;
}

/**
 * Told of each clean-up that failed, with what it left behind if the step said. In a function it is the
 * telemetry's (functions/telemetry/clean-up-report.ts: a log line with the `OrphanedObjects` metric), which
 * the composition root (functions/wiring/) installs; the core knows nothing of logs or requests.
 */
export type CleanUpReporter = (error: unknown, left: LeftBehind | undefined) => void;

// Until the composition root installs the telemetry's, a failure is still said, on stderr.
let reporter: CleanUpReporter = (error, left) => console.warn('clean-up failed', left?.keys ?? [], error);

/** Makes `next` the reporter of failed clean-ups in this container. */
export function reportCleanUpsTo(next: CleanUpReporter): void {
  reporter = next;
}

/**
 * Runs a clean-up step whose failure must not hide the outcome being reported; what it leaves behind, fsck
 * finds. A failure goes to the reporter with what `leftBehind` says the step would have removed (read when
 * it fails, so a step may fill it in as it goes).
 */
export async function cleanUp(step: () => Promise<unknown>, leftBehind?: () => LeftBehind): Promise<void> {
  try {
    await step();
  } catch (error) {
    reporter(error, leftBehind?.());
  }
}
