import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { parseArgs } from 'node:util';
import { DynamoKeyAdmin } from '../functions/aws/api-key-admin';
import { DynamoTrustStore } from '../functions/aws/dynamo-trust';
import { rawSetting, setting } from '../functions/config';
import { type ApiKeyRecord, DRIVE_ID, ROLES, type Role } from '../functions/core/access';
import { DriveError } from '../functions/core/errors';
import { parsePath } from '../functions/core/paths';
import { MAX_RULES_PER_DRIVE, type TrustRule } from '../functions/core/trust';
import { trustRuleRequest } from '../functions/http/trust-request';
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
  trust add --drive <id> --issuer <https URL> --audience <aud> --subject <sub> --role <role>
            [--claim name=value]… [--prefix /folder] [--max-ttl <seconds>]
                                       a trust rule: a job whose identity token (from that issuer, for that
                                       audience, with that subject and claims) is exchanged at POST
                                       /drive/token gets a key of <role> (upload-only, read-write, read-only;
                                       never admin) on --prefix, living at most --max-ttl seconds (60 to
                                       43200, default 3600). The subject may hold "*": any run of characters
                                       within one ":"-separated segment. Checked as POST /drive/trust checks it.
  trust list [--drive <id>]            every trust rule, and the keys minted under each that are live now
                                       (key id, subject, expires at)
  trust revoke <rule id> [--drive <id>]
                                       the rule admits no token from then on, and every key minted under
                                       it fails with 401 (as DELETE /drive/trust/{id})

Against a deployed stack: set DRIVE_ACCESS_TABLE (the stack's AccessTableName output) and AWS credentials
as usual. Otherwise against the local data dir (DRIVE_DATA_DIR, default .drive-data), running or not.`;

/** `npm run keys`: create, list and revoke API keys and trust rules in a deployed stack or the local data dir. */
async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      drive: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
      prefix: { type: 'string' },
      issuer: { type: 'string' },
      audience: { type: 'string' },
      subject: { type: 'string' },
      claim: { type: 'string', multiple: true },
      'max-ttl': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
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
      case 'trust':
        return await trustCommand(rest, values, target);
      default:
        return usageError(`unknown command "${command}"`);
    }
  } finally {
    await target.close();
  }
}

type TrustOptions = { drive?: string; issuer?: string; audience?: string; subject?: string; claim?: string[]; role?: string; prefix?: string; 'max-ttl'?: string };
type Target = Awaited<ReturnType<typeof openAccessTable>>;

/** `keys trust add|list|revoke`: a drive's trust rules, as the /drive/trust routes change them. */
async function trustCommand([sub, ...rest]: string[], values: TrustOptions, target: Target): Promise<number> {
  const rules = new DynamoTrustStore(target.client, target.table);
  switch (sub) {
    case 'add': {
      if (!values.drive || !DRIVE_ID.test(values.drive)) return usageError('trust add needs --drive <id> (1 to 64 letters, digits, "-" or "_")');
      const claims: Record<string, string> = {};
      for (const pair of values.claim ?? []) {
        const at = pair.indexOf('=');
        if (at < 1) return usageError(`--claim must be name=value (got ${JSON.stringify(pair)})`);
        claims[pair.slice(0, at)] = pair.slice(at + 1);
      }
      const ttl = values['max-ttl'];
      // The body POST /drive/trust would get, checked by the route's own check: the same rules, the same words.
      const body = {
        issuer: values.issuer,
        audience: values.audience,
        subject: values.subject,
        ...(values.claim ? { claims } : {}),
        role: values.role,
        ...(values.prefix !== undefined ? { prefix: values.prefix } : {}),
        ...(ttl !== undefined ? { max_ttl_seconds: /^[0-9]{1,6}$/.test(ttl) ? Number(ttl) : ttl } : {}),
      };
      let rule: Omit<TrustRule, 'id' | 'createdAt'>;
      try {
        rule = trustRuleRequest(Buffer.from(JSON.stringify(body)), target.loopbackIssuers);
      } catch (error) {
        if (error instanceof DriveError) return usageError(`trust add: ${error.message}`);
        throw error;
      }
      const made = await rules.add(values.drive, rule);
      if (made === 'full') {
        console.error(`Drive "${values.drive}" has ${MAX_RULES_PER_DRIVE} live trust rules in ${target.where}, its most; revoke one first.`);
        return 1;
      }
      console.log(`Added trust rule ${made.id} to drive "${values.drive}" in ${target.where}: ${describeRule(made)}.`);
      return 0;
    }
    case 'list': {
      if (rest.length > 0) return usageError(`trust list takes no ${JSON.stringify(rest[0])}; name a drive with --drive <id>`);
      const drives = (await rules.everyDrive()).filter((held) => values.drive === undefined || held.drive === values.drive);
      const now = Date.now();
      const live = (await new DynamoKeyAdmin(target.client, target.table).listAll()).filter(
        (key) => key.trustId !== undefined && !key.revokedAt && key.expiresAt !== undefined && Date.parse(key.expiresAt) > now,
      );
      if (drives.every((held) => held.rules.length === 0)) console.log(`No trust rules in ${target.where}.`);
      for (const { drive, rules: held } of drives) {
        for (const rule of held) {
          const keys = live.filter((key) => key.drive === drive && key.trustId === rule.id);
          console.log(`${rule.id}  drive "${drive}"  ${rule.revokedAt ? `revoked ${rule.revokedAt}` : 'active'}  created ${rule.createdAt}`);
          console.log(`  ${describeRule(rule)}`);
          if (keys.length === 0) {
            console.log('  no live minted keys');
            continue;
          }
          printRows([['KEY ID', 'SUBJECT', 'EXPIRES AT'], ...keys.map((key) => [key.keyId, key.subject ?? '', key.expiresAt ?? ''])], '  ');
        }
      }
      return 0;
    }
    case 'revoke': {
      if (rest.length !== 1) return usageError('trust revoke needs one rule id (see trust list)');
      const id = rest[0];
      // The tool names no drive unless told: the rule's id finds it.
      const drive = values.drive ?? (await rules.everyDrive()).find((held) => held.rules.some((rule) => rule.id === id))?.drive;
      const revoked = drive === undefined ? undefined : await rules.revokeWithKeys(drive, id);
      if (!revoked) {
        console.error(`No trust rule with id ${id} in ${target.where}${values.drive ? ` for drive "${values.drive}"` : ''}.`);
        return 1;
      }
      console.log(`Revoked trust rule ${id} of drive "${drive}" and ${revoked.keysRevoked} live key${revoked.keysRevoked === 1 ? '' : 's'} minted under it.`);
      return 0;
    }
    default:
      return usageError(sub ? `unknown trust command "${sub}"` : 'trust needs add, list or revoke');
  }
}

/** A rule in one line: whose tokens it admits, and what they get. */
function describeRule(rule: TrustRule): string {
  const claims = Object.entries(rule.claims).map(([name, value]) => ` ${name}=${value}`).join(',');
  return `tokens of ${rule.issuer} for audience "${rule.audience}" with subject "${rule.subject}"${claims ? ` and claims${claims}` : ''} get ${rule.role} keys on ${rule.prefix} for at most ${rule.maxTtlSeconds} s`;
}

/** The access table to work on: the deployed one named by env, or the local data dir's. */
async function openAccessTable(): Promise<{ client: DynamoDBClient; table: string; where: string; loopbackIssuers: boolean; close(): Promise<void> }> {
  const deployed = rawSetting('accessTable');
  if (deployed) {
    const client = new DynamoDBClient({});
    // The stack never trusts loopback issuers; DRIVE_TRUST_LOOPBACK_ISSUERS says so for another table.
    return { client, table: deployed, where: `table ${deployed}`, loopbackIssuers: setting('trustLoopbackIssuers'), close: async () => client.destroy() };
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
    // The local host trusts issuers on loopback (http://127.0.0.1:<port>), so its data may name them.
    loopbackIssuers: true,
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
  printRows(rows);
}

function printRows(rows: string[][], indent = ''): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(indent + row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
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
