import type { Drive } from '../drive';
import { DriveError } from '../errors';
import type { EmptyTrashJob, RestoreJob, TrashItem, TrashPage } from '../types';
import type { Command } from './args';
import type { Output } from './output';
import { formatBytes } from './progress';

/**
 * `drive trash`: `ls [/folder]` lists the trash a page at a time (`--json`: every item and the usage, in the
 * API's shape), `restore <id> [--to /path] [-f]` puts an item back (a big folder's job followed, its progress on
 * stderr), `purge <id>` and `purge --path /folder` delete for good (a big emptying's job followed, its progress on stderr).
 */
export async function trashCommand(command: Extract<Command, { name: 'trash' }>, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  switch (command.action) {
    case 'ls': {
      const items: TrashItem[] = [];
      let usage: TrashPage['usage'] = { items: 0, files: 0, bytes: 0 };
      for await (const page of drive.trashPages(command.path, { signal })) {
        for (const item of page.items) out.line(itemLine(item));
        if (out.json) items.push(...page.items);
        usage = page.usage;
      }
      out.line(`${usage.items} item(s), ${usage.files} file(s), ${formatBytes(usage.bytes)} in the trash${command.path === undefined ? '' : ` below ${command.path}`}`);
      out.document({ items, usage });
      return 0;
    }
    case 'restore': {
      let reported = -1;
      // Say once that the folder goes on in a job, then each time its count moves.
      const onProgress = (job: RestoreJob) => {
        if (job.status === 'done' || job.files_restored === reported) return;
        out.warn(reported < 0 ? `${job.to} is being restored (job ${job.id}): ${job.files_restored} file(s) so far` : `  ${job.files_restored} file(s) restored`);
        reported = job.files_restored;
      };
      const entry = await drive.restore(command.id, { to: command.to, overwrite: command.overwrite, signal, onProgress }).catch((error: unknown) => {
        // The API's 409 names its body field; here the same thing is a flag.
        if (error instanceof DriveError && error.message.includes('pass "overwrite": true')) {
          throw new DriveError(error.code, error.message.replace('pass "overwrite": true', 'pass -f'), error.status, { cause: error });
        }
        throw error;
      });
      out.line(`restored ${command.id} -> ${entry.path}${'size' in entry ? '' : '/'}`);
      out.document(entry);
      return 0;
    }
    case 'purge': {
      const purged = await drive.purge(command.id, { signal });
      out.line(`purged ${purged.id} (${purged.files} file(s), ${formatBytes(purged.bytes)})`);
      out.document(purged);
      return 0;
    }
    case 'purge-path': {
      let reported = -1;
      // Say once that the emptying goes on in a job, then each time its count moves.
      const onProgress = (job: EmptyTrashJob) => {
        if (job.status === 'done' || job.files_purged === reported) return;
        out.warn(reported < 0 ? `the trash below ${job.path} is being emptied (job ${job.id}): ${job.files_purged} file(s) so far` : `  ${job.files_purged} file(s) purged`);
        reported = job.files_purged;
      };
      const emptied = await drive.purgePath(command.path, { signal, onProgress });
      out.line(`purged ${emptied.items} item(s) taken from ${emptied.path} (${emptied.files} file(s), ${formatBytes(emptied.bytes)})`);
      out.document(emptied);
      return 0;
    }
  }
}

/** One item as `trash ls` shows it: id, kind, size, when it was deleted and will be purged, and its path (a folder's with `/`). */
function itemLine(item: TrashItem): string {
  const kind = item.type === 'folder' ? `folder(${item.files ?? 0})` : item.reason === 'replaced' ? 'replaced' : 'file';
  return `${item.id}  ${kind.padEnd(12)}  ${formatBytes(item.size).padStart(10)}  ${item.deleted_at}  ${item.purge_at}  ${item.path}${item.type === 'folder' ? '/' : ''}`;
}
