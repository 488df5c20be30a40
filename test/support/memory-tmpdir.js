// The suite's scratch files (hosts' data dirs, bundles, Chromium's profiles) on a memory file system where the
// machine has one with room: a host's S3 and DynamoDB keep every object, part and staged write as files, and
// on a disk each create, rename and unlink costs the host CPU in the kernel. Measured on the 2-core machine,
// `delete-files` and `races` back to back, two pairs: their hosts' CPU 55.2 and 58.0 s on /dev/shm against
// 64.4 and 70.7 s on /tmp (ext4). A TMPDIR the caller set is kept; so is the default where /dev/shm is absent,
// not writable or small (a container's default /dev/shm is 64 MB; the suite writes files of tens of MiB).
const { accessSync, constants, statfsSync } = require('node:fs');

const MEMORY_DIR = '/dev/shm';
/** Free space /dev/shm must have to be used. */
const ROOM_BYTES = 4 * 1024 ** 3;

/** Points TMPDIR at /dev/shm for this process and the workers and hosts it starts, where that is sound. */
function useMemoryTmpdir() {
  if (process.env.TMPDIR !== undefined || process.platform !== 'linux') return;
  try {
    accessSync(MEMORY_DIR, constants.W_OK);
    const { bavail, bsize } = statfsSync(MEMORY_DIR);
    if (bavail * bsize >= ROOM_BYTES) process.env.TMPDIR = MEMORY_DIR;
  } catch {
    // No /dev/shm: the default temporary folder.
  }
}

module.exports = { useMemoryTmpdir };
