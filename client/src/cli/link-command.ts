import type { Drive } from '../drive';
import type { Command } from './args';
import type { Output } from './output';

/**
 * `drive link`: `/path [--expires 7d]` prints the new link's URL (the only time it is shown), `--list
 * [/path]` the live links as `id  expires_at  path`, `--revoke <id>` revokes one.
 */
export async function linkCommand(command: Extract<Command, { name: 'link' }>, drive: Drive, out: Output, signal: AbortSignal): Promise<number> {
  switch (command.action) {
    case 'create': {
      const link = await drive.createLink(command.path, { expiresIn: command.expiresIn, signal });
      out.line(link.url);
      out.document(link);
      return 0;
    }
    case 'list': {
      const links = await drive.listLinks(command.path, { signal });
      for (const link of links) out.line(`${link.id}  ${link.expires_at}  ${link.path}`);
      out.document({ links });
      return 0;
    }
    case 'revoke': {
      const revoked = await drive.revokeLink(command.id, { signal });
      out.line(`revoked ${revoked.id}`);
      out.document(revoked);
      return 0;
    }
  }
}
