import { readFile, rename, writeFile } from 'node:fs/promises';
import type { Drive } from '../drive';
import type { DriveChange } from '../types';
import type { Command } from './args';
import type { Output } from './output';

/**
 * `drive watch [/folder] [--cursor-file f]`: prints each change below the folder as it comes, a line each
 * (`--json`: the change as one JSON object a line), until interrupted. With a cursor file it starts from the
 * cursor kept there (from now, if there is none) and keeps the cursor after each page it printed, so a watch
 * killed and started again prints every change, repeating at most the page it was printing.
 */
export async function watchCommand(command: Extract<Command, { name: 'watch' }>, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  const { cursorFile } = command;
  const kept = cursorFile === undefined ? undefined : (await readFile(cursorFile, 'utf8').catch(() => '')).trim() || undefined;
  const keep = async (cursor: string) => {
    if (cursorFile === undefined) return;
    // Whole or not at all: a kill mid-write leaves the cursor before it.
    await writeFile(`${cursorFile}.tmp`, `${cursor}\n`);
    await rename(`${cursorFile}.tmp`, cursorFile);
  };
  for await (const change of drive.changes(command.folder, { cursor: kept, signal, onCursor: keep })) {
    out.line(lineOf(change));
    out.jsonLine(change);
  }
  return 0;
}

/** A change as a line: `<at>  <type>  <path>`, a move with `<- <from>`. */
function lineOf(change: DriveChange): string {
  return `${change.at}  ${change.type}  ${change.path}${change.from === undefined ? '' : `  <- ${change.from}`}`;
}
