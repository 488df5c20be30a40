import type { Drive, UploadProgress } from '../drive';
import type { SyncChange, SyncReport } from '../sync/sync';
import type { Command } from './args';
import type { Output } from './output';
import { ProgressLine, formatBytes } from './progress';
import { EXIT_INTERRUPTED } from './upload-command';

type SyncCommand = Extract<Command, { name: 'sync' }>;

/**
 * `drive sync <src> <dst>`: one line per change as it happens (`uploaded /b/x.csv (new, 1.2 KiB)`; with
 * `--dry-run`, `would upload …`), each failure once on stderr, then the summary (`uploaded 12 (3.1 MiB),
 * deleted 2, unchanged 9,870, failed 0 in 4.2 s`). With `--json`, one JSON object a line per change, the
 * summary last. A progress bar on a terminal (not with `--json` or `--quiet`). Exit 0 when the destination
 * equals the source, 1 when any file failed, 2 (from `run`) for a refused plan, 130 when interrupted.
 */
export async function syncCommand(command: SyncCommand, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  const started = Date.now();
  const bar = !out.json && !out.quiet && out.io.stderr.isTTY ? new ProgressLine(out.io.stderr, started) : undefined;
  let last: UploadProgress | undefined;
  const report = await drive.sync(command.src, command.dst, {
    delete: command.delete,
    maxDelete: command.maxDelete,
    dryRun: command.dryRun,
    sizeOnly: command.sizeOnly,
    filters: command.filters,
    concurrency: command.concurrency,
    signal,
    onChange: (change) => {
      bar?.clear();
      if (out.json) out.jsonLine({ type: 'change', ...changeJson(change) });
      else if (change.ok) out.line(changeLine(change));
      else out.warn(`failed ${change.path}: ${change.error!.message} (${change.error!.code})`);
      if (last) bar?.update(last, true);
    },
    onProgress: (progress) => {
      last = progress;
      bar?.update(progress);
    },
  });
  if (bar && last) bar.done(last);
  if (out.json) out.jsonLine({ type: 'summary', ...summaryJson(report) });
  else if (!out.quiet) out.io.stdout.write(`${summaryLine(report)}\n`);
  if (report.interrupted) return EXIT_INTERRUPTED;
  return report.failed.length > 0 ? 1 : 0;
}

const VERB: Record<SyncChange['action'], [string, string]> = {
  upload: ['uploaded', 'would upload'],
  download: ['downloaded', 'would download'],
  delete: ['deleted', 'would delete'],
  mkdir: ['created', 'would create'],
  rmdir: ['deleted', 'would delete'],
  skip: ['skipped', 'would skip'],
};

/** `uploaded /b/x.csv (new, 1.2 KiB)`, `would delete /b/old.csv`, `created /b/empty/`. */
export function changeLine(change: SyncChange): string {
  const verb = VERB[change.action][change.dryRun ? 1 : 0];
  const folder = change.action === 'mkdir' || change.action === 'rmdir' ? '/' : '';
  const detail = change.reason ? ` (${change.reason}, ${formatBytes(change.size ?? 0)})` : '';
  return `${verb} ${change.path}${folder}${detail}`;
}

/** `uploaded 12 (3.1 MiB), deleted 2, unchanged 9,870, failed 0 in 4.2 s` (`downloaded` going down). */
export function summaryLine(report: SyncReport): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const verb = report.direction === 'up' ? 'uploaded' : 'downloaded';
  const parts = [
    `${report.dryRun ? `dry run: would have ${verb}` : report.interrupted ? `interrupted: ${verb}` : verb} ${n(report.transferred.files)} (${formatBytes(report.transferred.bytes)})`,
    `deleted ${n(report.deleted)}`,
    ...(report.foldersCreated > 0 ? [`created ${n(report.foldersCreated)} folder(s)`] : []),
    `unchanged ${n(report.unchanged)}`,
    `failed ${n(report.failed.length)} in ${report.seconds.toFixed(1)} s`,
  ];
  return parts.join(', ');
}

function changeJson(change: SyncChange) {
  return {
    action: change.action,
    path: change.path,
    relative: change.relative,
    ...(change.source === undefined ? {} : { source: change.source }),
    ...(change.reason === undefined ? {} : { reason: change.reason }),
    ...(change.size === undefined ? {} : { size: change.size }),
    ok: change.ok,
    ...(change.dryRun ? { dry_run: true } : {}),
    ...(change.error ? { error: change.error } : {}),
  };
}

function summaryJson(report: SyncReport) {
  return {
    ok: !report.interrupted && report.failed.length === 0,
    direction: report.direction,
    source: report.source,
    destination: report.destination,
    dry_run: report.dryRun,
    interrupted: report.interrupted,
    transferred: report.transferred.files,
    bytes: report.transferred.bytes,
    deleted: report.deleted,
    folders_created: report.foldersCreated,
    unchanged: report.unchanged,
    failed: report.failed.length,
    seconds: Number(report.seconds.toFixed(3)),
  };
}
