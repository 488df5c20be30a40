import type { Drive } from '../drive';
import { DriveError } from '../errors';
import type { CopyJob, MoveJob } from '../types';
import type { Command } from './args';
import type { Output } from './output';

/**
 * `drive mv` and `drive cp`: the file or folder at `from` goes (or is copied) to `to`, and the line says where
 * it is now; `--json` prints the entry. A big folder goes on in a job on the server, whose progress is shown
 * on stderr as `drive rm -r` shows a delete's.
 */
export async function mvCpCommand(command: Extract<Command, { name: 'mv' | 'cp' }>, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  const verb = command.name === 'mv' ? 'moved' : 'copied';
  let reported = -1;
  // Say once that the folder goes on in a job, then each time its count moves.
  const onProgress = (job: MoveJob | CopyJob) => {
    const files = job.type === 'move-folder' ? job.files_moved : job.files_copied;
    if (job.status === 'done' || files === reported) return;
    out.warn(reported < 0 ? `${job.path} is being ${verb} to ${job.to} (job ${job.id}): ${files} file(s) so far` : `  ${files} file(s) ${verb}`);
    reported = files;
  };
  const options = { overwrite: command.overwrite, signal, onProgress };
  const entry = await (command.name === 'mv' ? drive.move(command.from, command.to, options) : drive.copy(command.from, command.to, options)).catch((error: unknown) => {
    // The API's 409 names its body field; here the same thing is a flag.
    if (error instanceof DriveError && error.message.includes('pass "overwrite": true')) {
      throw new DriveError(error.code, error.message.replace('pass "overwrite": true', 'pass -f'), error.status, { cause: error });
    }
    throw error;
  });
  out.line(`${verb} ${command.from} -> ${entry.path}${'size' in entry ? '' : '/'}`);
  out.document(entry);
  return 0;
}
