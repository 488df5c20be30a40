import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { nodeArgs } from './host-bundle-files';

const ROOT = resolve(__dirname, '..', '..');

/** Runs `npm run fsck -- …` (its entry point) on a local data dir; resolves with its exit code and output. */
export async function runFsck(dataDir: string, ...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [...nodeArgs('bin/fsck.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, DRIVE_DATA_DIR: dataDir, DRIVE_NODES_TABLE: '', DRIVE_BUCKET: '' },
    });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}
