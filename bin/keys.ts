import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { parseArgs } from 'node:util';
import { DynamoKeyAdmin } from '../functions/aws/api-key-admin';
import { rawSetting, setting } from '../functions/config';
import { type ApiKeyRecord, ROLES, type Role } from '../functions/core/access';
import { parsePath } from '../functions/core/paths';
import { LOCAL_REGION, LOCAL_RESOURCES, localCredentials, runningHost, startEmbeddedDynamo } from '../lib/local/emulators';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `Usage: npm run keys -- <command>
  create --drive <id> --name <label> [--role <role>] [--prefix /folder]
                                       create a key; its secret is printed once, alone on the last line.
                                       role: admin (manages keys, also in the dashboard),
                                       read-write (the default), read-only, upload-only; --prefix confines
                                       the key to one folder (not for admin keys)
  list                                 every key: id, drive, role, prefix, name, created, last used, last four characters, state
  revoke <key id>                      the key fails with 401 from then on

Against a deployed stack: set DRIVE_ACCESS_TABLE (the stack's AccessTableName output) and AWS credentials
as usual. Otherwise against the local data dir (DRIVE_DATA_DIR, default .drive-data), running or not.`;

/** `npm run keys`: create, list and revoke API keys in a deployed stack or the local data dir. */
async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { drive: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, prefix: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }

  const target = await openAccessTable();
  try {
    const admin = new DynamoKeyAdmin(target.client, target.table);
    switch (command) {
      case 'create': {
        if (!values.drive || !values.name) return usageError('create needs --drive <id> and --name <label>');
        if (values.role !== undefined && !(ROLES as string[]).includes(values.role)) return usageError(`--role must be one of ${ROLES.join(', ')}`);
        const prefix = values.prefix === undefined ? undefined : parsePath(values.prefix, '--prefix', { allowTrailingSlash: true });
        const { record, secret } = await admin.create(values.drive, values.name, { role: values.role as Role | undefined, prefix });
        const scope = record.prefix === '/' ? '' : ` confined to ${record.prefix}`;
        console.log(`Created ${record.role} key ${record.keyId}${scope} for drive "${record.drive}" (${record.name}) in ${target.where}. The secret is shown only now:`);
        console.log(secret);
        return 0;
      }
      case 'list': {
        printTable(await admin.listAll());
        return 0;
      }
      case 'revoke': {
        if (rest.length !== 1) return usageError('revoke needs one key id (see list)');
        const record = await admin.revoke(rest[0]);
        if (!record || record === 'last admin') {
          console.error(`No key with id ${rest[0]} in ${target.where}.`);
          return 1;
        }
        console.log(`Revoked key ${record.keyId} of drive "${record.drive}" (${record.name}).`);
        return 0;
      }
      default:
        return usageError(`unknown command "${command}"`);
    }
  } finally {
    await target.close();
  }
}

/** The access table to work on: the deployed one named by env, or the local data dir's. */
async function openAccessTable(): Promise<{ client: DynamoDBClient; table: string; where: string; close(): Promise<void> }> {
  const deployed = rawSetting('accessTable');
  if (deployed) {
    const client = new DynamoDBClient({});
    return { client, table: deployed, where: `table ${deployed}`, close: async () => client.destroy() };
  }
  const dataDir = setting('dataDir');
  // While npm start runs it holds the LevelDB lock, so go through its emulator.
  const running = await runningHost(dataDir);
  const embedded = running ? undefined : await startEmbeddedDynamo(dataDir);
  const client = new DynamoDBClient({ endpoint: running?.dynamodb ?? embedded!.endpoint, region: LOCAL_REGION, credentials: await localCredentials(dataDir) });
  return {
    client,
    table: LOCAL_RESOURCES.accessTable,
    where: `local data dir ${dataDir}`,
    close: async () => {
      client.destroy();
      await embedded?.close();
    },
  };
}

function printTable(records: ApiKeyRecord[]): void {
  const rows = [
    ['ID', 'DRIVE', 'ROLE', 'PREFIX', 'NAME', 'CREATED', 'LAST USED', 'LAST4', 'STATE'],
    ...records.map((r) => [r.keyId, r.drive, r.role, r.prefix, r.name, r.createdAt, r.lastUsedAt ?? '-', `…${r.last4}`, r.revokedAt ? `revoked ${r.revokedAt}` : 'active']),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
}

function usageError(message: string): number {
  console.error(`${message}\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  // Exit once stdout has taken everything: a pipe's reader may be slower than this process (`| less`).
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    console.error(`keys: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
