import { setting } from '../config';
import { LiveFolders } from '../core/live-folders';

/** The folders this container found live after writing into them: a one-file upload there skips its first read. */
export const liveFolders = new LiveFolders(setting('folderCacheSeconds') * 1000);
