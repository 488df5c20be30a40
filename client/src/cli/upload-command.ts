import type { Drive, UploadOutcome, UploadProgress } from '../drive';
import { isAbortError } from '../errors';
import type { DriveFile } from '../types';
import type { Command } from './args';
import { type LocalFile, collectFiles } from './local-tree';
import { type Output, describe } from './output';
import { ProgressLine, formatBytes } from './progress';
import { splitExisting } from './skip-existing';

type UploadCommand = Extract<Command, { name: 'upload' }>;

/** The exit code of an interrupted run (128 + SIGINT), as shells report it. */
export const EXIT_INTERRUPTED = 130;

interface Outcomes {
  uploaded: { file: LocalFile; stored: DriveFile }[];
  failed: { file: LocalFile; error: ReturnType<typeof describe> }[];
}

/**
 * `drive upload`: collects the files, leaves out those the drive already holds (`--skip-existing`), then
 * uploads the rest, reporting each file as it lands (a progress bar on a terminal, a line per file
 * otherwise, one JSON document with `--json`), and ends with a summary naming every failed file.
 * Exit code 0 when every file is there, 1 when any failed, 130 when interrupted.
 */
export async function uploadCommand(command: UploadCommand, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  const started = Date.now();
  const { files, skipped: notFiles } = await collectFiles(command.sources, command.to);
  for (const path of notFiles) out.warn(`skipped ${path}: not a regular file (or a link to a directory)`);
  let toSend = files;
  let existing: LocalFile[] = [];
  if (command.skipExisting) {
    const split = await splitExisting(drive, files, command.to, signal);
    toSend = split.missing;
    existing = split.existing;
    if (split.unprovable > 0) out.warn(`${split.unprovable} file(s) of the same size on the drive have no content ETag (stored before the server kept one), so they are sent again`);
  }

  if (command.dryRun) {
    for (const file of existing) out.line(`would skip ${file.local} -> ${file.remote} (same size and ETag)`);
    for (const file of toSend) out.line(`would upload ${file.local} -> ${file.remote} (${formatBytes(file.size)})`);
    out.line(`dry run: ${toSend.length} file(s) (${formatBytes(sum(toSend))}) would be uploaded, ${existing.length} skipped`);
    out.document({ ok: true, dry_run: true, to: command.to, planned: toSend.map(entryOf), skipped: existing.map(entryOf), files: files.length, bytes: sum(files) });
    return 0;
  }

  const outcomes: Outcomes = { uploaded: [], failed: [] };
  const byRemote = new Map(toSend.map((file) => [file.remote, file]));
  const bar = !out.json && out.io.stderr.isTTY ? new ProgressLine(out.io.stderr, started) : undefined;
  let last: UploadProgress = { filesTotal: toSend.length, filesDone: 0, filesFailed: 0, bytesTotal: sum(toSend), bytesDone: 0 };
  const onFile = (outcome: UploadOutcome) => {
    const file = byRemote.get(outcome.item.path)!;
    if (outcome.ok) {
      outcomes.uploaded.push({ file, stored: outcome.file });
      if (!bar) out.line(`uploaded ${file.remote} (${formatBytes(file.size)})`);
    } else {
      const error = describe(outcome.error);
      outcomes.failed.push({ file, error });
      bar?.clear();
      out.warn(`failed ${file.local} -> ${file.remote}: ${error.message} (${error.code}, ${error.status})`);
    }
  };
  let interrupted = false;
  try {
    await drive.uploadMany(
      toSend.map((file) => ({ file: file.local, path: file.remote })),
      {
        signal,
        onFile,
        onProgress: (progress) => {
          last = progress;
          bar?.update(progress);
        },
      },
    );
  } catch (error) {
    if (!isAbortError(error)) throw error;
    interrupted = true;
  }
  if (bar) bar.done(last);

  const seconds = (Date.now() - started) / 1000;
  const stats = drive.stats;
  const notSent = toSend.length - outcomes.uploaded.length - outcomes.failed.length;
  out.line(
    `${interrupted ? 'interrupted: ' : ''}uploaded ${outcomes.uploaded.length} file(s) (${formatBytes(outcomes.uploaded.reduce((n, u) => n + u.file.size, 0))})` +
      `, skipped ${existing.length}, failed ${outcomes.failed.length}${notSent > 0 ? `, not sent ${notSent}` : ''}` +
      ` in ${seconds.toFixed(1)} s; ${stats.requests} HTTP requests (${stats.rateLimited} rate-limited, ${stats.retries} retried)`,
  );
  // Each failure was said once, as it happened (with the bar cleared); the summary counts them.
  out.document({
    ok: !interrupted && outcomes.failed.length === 0,
    interrupted,
    dry_run: false,
    to: command.to,
    files: files.length,
    bytes: sum(files),
    uploaded: outcomes.uploaded.map(({ file, stored }) => ({ ...entryOf(file), id: stored.id })),
    skipped: existing.map(entryOf),
    failed: outcomes.failed.map(({ file, error }) => ({ ...entryOf(file), ...error })),
    not_sent: notSent,
    requests: stats.requests,
    rate_limited: stats.rateLimited,
    retries: stats.retries,
    seconds: Number(seconds.toFixed(3)),
  });
  if (interrupted) return EXIT_INTERRUPTED;
  return outcomes.failed.length > 0 ? 1 : 0;
}

function entryOf(file: LocalFile) {
  return { local: file.local, path: file.remote, size: file.size };
}

function sum(files: readonly LocalFile[]): number {
  return files.reduce((n, file) => n + file.size, 0);
}
