import { statSync } from 'node:fs';
import { posix } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';

/** A command line that cannot be run as written; the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * Where the API is and how to authorize: flags first, then `DRIVE_URL` and `DRIVE_API_KEY`; without a key, an
 * OIDC token to exchange (`--oidc-token-file`, `DRIVE_OIDC_TOKEN_FILE`, `DRIVE_OIDC_TOKEN`, or the GitHub
 * Actions runner's token request).
 */
export type Connection = { url: string } & ({ apiKey: string } | { oidc: OidcSource });

/** Where the CLI gets an OIDC token at each exchange. */
export type OidcSource =
  | { kind: 'token'; token: string }
  | { kind: 'file'; path: string }
  | { kind: 'github-actions'; requestUrl: string; requestToken: string; audience?: string };

interface Globals {
  json: boolean;
  /** Only failures (stderr) and, with `--json`, the JSON: no result lines, no progress, no retry notes. */
  quiet?: boolean;
  url?: string;
  apiKey?: string;
  oidcTokenFile?: string;
}

export type Command =
  | { name: 'help'; topic?: string }
  | { name: 'version' }
  | ({ name: 'upload'; sources: string[]; to: string; concurrency?: number; dryRun: boolean; skipExisting: boolean } & Globals)
  | ({ name: 'ls'; folder: string; recursive: boolean } & Globals)
  | ({ name: 'get'; path: string; output?: string } & Globals)
  | ({ name: 'mkdir'; paths: string[] } & Globals)
  | ({ name: 'rm'; paths: string[]; recursive: boolean } & Globals)
  | ({ name: 'mv' | 'cp'; from: string; to: string; overwrite: boolean } & Globals)
  | ({ name: 'link' } & LinkAction & Globals)
  | ({ name: 'trash' } & TrashAction & Globals)
  | ({ name: 'sync' } & SyncArgs & Globals)
  | ({ name: 'watch'; folder: string; cursorFile?: string } & Globals);

/** `drive sync <src> <dst>`: the sides (exactly one a drive folder) and the flags. */
export interface SyncArgs {
  src: { local: string } | { drive: string };
  dst: { local: string } | { drive: string };
  delete: boolean;
  /** Only with `delete`; -1 no limit. */
  maxDelete: number;
  dryRun: boolean;
  sizeOnly: boolean;
  filters: { kind: 'exclude' | 'include'; pattern: string }[];
  concurrency?: number;
}

/** What `drive link` does: make a link to a file, list links (of one file, or all), or revoke one. */
export type LinkAction = { action: 'create'; path: string; expiresIn?: number } | { action: 'list'; path?: string } | { action: 'revoke'; id: string };

/** What `drive trash` does: list the trash (below a folder), restore an item, purge an item, or empty a folder's trash. */
export type TrashAction =
  | { action: 'ls'; path?: string }
  | { action: 'restore'; id: string; to?: string; overwrite: boolean }
  | { action: 'purge'; id: string }
  | { action: 'purge-path'; path: string };

type Options = NonNullable<ParseArgsConfig['options']>;

const GLOBAL_OPTIONS: Options = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  'oidc-token-file': { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
};

const COMMAND_OPTIONS: Record<string, Options> = {
  upload: {
    to: { type: 'string', short: 't' },
    concurrency: { type: 'string', short: 'c' },
    'dry-run': { type: 'boolean', short: 'n' },
    'skip-existing': { type: 'boolean' },
  },
  ls: { recursive: { type: 'boolean', short: 'r' } },
  get: { output: { type: 'string', short: 'o' } },
  mkdir: {},
  rm: { recursive: { type: 'boolean', short: 'r' } },
  mv: { overwrite: { type: 'boolean', short: 'f' } },
  cp: { overwrite: { type: 'boolean', short: 'f' } },
  link: { expires: { type: 'string', short: 'e' }, list: { type: 'boolean', short: 'l' }, revoke: { type: 'string' } },
  watch: { 'cursor-file': { type: 'string' } },
  trash: { to: { type: 'string', short: 't' }, overwrite: { type: 'boolean', short: 'f' }, path: { type: 'string' } },
  sync: {
    delete: { type: 'boolean' },
    'max-delete': { type: 'string' },
    'dry-run': { type: 'boolean', short: 'n' },
    'size-only': { type: 'boolean' },
    exclude: { type: 'string', multiple: true },
    include: { type: 'string', multiple: true },
    concurrency: { type: 'string', short: 'c' },
  },
};

/** Parses the arguments after `drive` into a command; throws `UsageError` for anything it cannot run. */
export function parseCommand(argv: readonly string[]): Command {
  const at = commandIndex(argv);
  if (at === -1) {
    if (argv.includes('--version') || argv.includes('-v')) return { name: 'version' };
    if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) return { name: 'help' };
    throw new UsageError('no command given');
  }
  const name = argv[at];
  if (name === 'help') return { name: 'help', topic: argv[at + 1] };
  const own = COMMAND_OPTIONS[name];
  if (!own) throw new UsageError(`unknown command "${name}"`);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    // `--max-delete -1` reads as a value, not as a flag `-1` (parseArgs would call it ambiguous).
    const args = [...argv.slice(0, at), ...argv.slice(at + 1)].flatMap((arg, i, all) => (arg === '--max-delete' && /^-[0-9]+$/.test(all[i + 1] ?? '') ? [] : i > 0 && all[i - 1] === '--max-delete' && /^-[0-9]+$/.test(arg) ? [`--max-delete=${arg}`] : [arg]));
    parsed = parseArgs({ args, options: { ...GLOBAL_OPTIONS, ...own }, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) return { name: 'help', topic: name };
  const globals: Globals = { json: values.json === true, ...(values.quiet === true ? { quiet: true } : {}), url: str(values.url), apiKey: str(values['api-key']), oidcTokenFile: str(values['oidc-token-file']) };
  const positionals = parsed.positionals;

  switch (name) {
    case 'upload':
      if (positionals.length === 0) throw new UsageError('upload needs at least one file or directory');
      return {
        name,
        ...globals,
        sources: positionals,
        to: driveFolder(str(values.to) ?? '/', '--to'),
        concurrency: values.concurrency === undefined ? undefined : positiveInteger(str(values.concurrency), '--concurrency'),
        dryRun: values['dry-run'] === true,
        skipExisting: values['skip-existing'] === true,
      };
    case 'ls':
      return { name, ...globals, folder: driveFolder(single(positionals, 'ls', 'folder', '/'), 'folder'), recursive: values.recursive === true };
    case 'get':
      return { name, ...globals, path: drivePath(single(positionals, 'get', 'path'), 'path'), output: str(values.output) };
    case 'mkdir':
      if (positionals.length === 0) throw new UsageError('mkdir needs a folder path');
      return { name, ...globals, paths: positionals.map((path) => drivePath(path, 'folder')) };
    case 'link':
      return { name, ...globals, ...linkAction(positionals, values) };
    case 'trash':
      return { name, ...globals, ...trashAction(positionals, values) };
    case 'mv':
    case 'cp':
      return { name, ...globals, ...fromTo(positionals, name), overwrite: values.overwrite === true };
    case 'sync':
      return { name, ...globals, ...syncArgs(positionals, values, parsed.tokens ?? []) };
    case 'watch':
      return { name, ...globals, folder: driveFolder(single(positionals, 'watch', 'folder', '/'), 'folder'), cursorFile: str(values['cursor-file']) };
    default:
      if (positionals.length === 0) throw new UsageError('rm needs at least one path: a file, or a folder (with -r, everything in it)');
      return { name: 'rm', ...globals, paths: positionals.map((path) => drivePath(path, 'path')), recursive: values.recursive === true };
  }
}

/** The API's address and key for `command`: its flags, else the environment; a `UsageError` if either is missing. */
export function connectionOf(globals: { url?: string; apiKey?: string; oidcTokenFile?: string }, env: Record<string, string | undefined>): Connection {
  const url = globals.url ?? env.DRIVE_URL;
  if (!url) throw new UsageError('no API address: set DRIVE_URL or pass --url');
  if (!/^https?:\/\//.test(url)) throw new UsageError(`DRIVE_URL / --url must be an http(s) URL (got "${url}")`);
  if (globals.apiKey) return { url, apiKey: globals.apiKey };
  if (globals.oidcTokenFile) return { url, oidc: { kind: 'file', path: globals.oidcTokenFile } };
  if (env.DRIVE_API_KEY) return { url, apiKey: env.DRIVE_API_KEY };
  if (env.DRIVE_OIDC_TOKEN_FILE) return { url, oidc: { kind: 'file', path: env.DRIVE_OIDC_TOKEN_FILE } };
  if (env.DRIVE_OIDC_TOKEN) return { url, oidc: { kind: 'token', token: env.DRIVE_OIDC_TOKEN } };
  if (env.ACTIONS_ID_TOKEN_REQUEST_URL && env.ACTIONS_ID_TOKEN_REQUEST_TOKEN) {
    return { url, oidc: { kind: 'github-actions', requestUrl: env.ACTIONS_ID_TOKEN_REQUEST_URL, requestToken: env.ACTIONS_ID_TOKEN_REQUEST_TOKEN, audience: env.DRIVE_OIDC_AUDIENCE || undefined } };
  }
  throw new UsageError('no API key: set DRIVE_API_KEY or pass --api-key');
}

/**
 * `drive sync <src> <dst>`. The drive side is the one written `drive:/path`; without that prefix on either,
 * the one starting with `/` (so `./out /backup` syncs up, `/backup ./out` down); of two paths starting with
 * `/`, the one that is a local folder, if only one is (else one must be written `drive:/path`).
 */
function syncArgs(positionals: string[], values: Record<string, unknown>, tokens: NonNullable<ReturnType<typeof parseArgs>['tokens']>): SyncArgs {
  if (positionals.length !== 2) throw new UsageError(`sync takes a source and a destination, got ${positionals.length} path(s)`);
  const [a, b] = positionals;
  const prefixed = (p: string) => p.startsWith('drive:');
  let sides: [SyncArgs['src'], SyncArgs['dst']];
  if (prefixed(a) && prefixed(b)) throw new UsageError('sync copies between a local folder and a drive folder, not two drive folders');
  else if (prefixed(a) || prefixed(b)) sides = [prefixed(a) ? { drive: a.slice(6) } : { local: a }, prefixed(b) ? { drive: b.slice(6) } : { local: b }];
  else if (a.startsWith('/') && b.startsWith('/')) {
    // Two absolute paths: the one that is a local folder is local, if only one is.
    const [aLocal, bLocal] = [isLocalFolder(a), isLocalFolder(b)];
    if (aLocal === bLocal) throw new UsageError(`both "${a}" and "${b}" start with "/": write the drive side as drive:/path`);
    sides = aLocal ? [{ local: a }, { drive: b }] : [{ drive: a }, { local: b }];
  }
  else if (!a.startsWith('/') && !b.startsWith('/')) throw new UsageError('one side of sync must be a drive folder: /path or drive:/path');
  else sides = [a.startsWith('/') ? { drive: a } : { local: a }, b.startsWith('/') ? { drive: b } : { local: b }];
  for (const side of sides) if ('drive' in side) side.drive = driveFolder(side.drive, 'the drive folder');
  const del = values.delete === true;
  const maxDeleteText = str(values['max-delete'] as string | undefined);
  if (maxDeleteText !== undefined && !del) throw new UsageError('--max-delete goes with --delete');
  if (maxDeleteText !== undefined && !/^(-1|0|[1-9][0-9]*)$/.test(maxDeleteText)) throw new UsageError(`--max-delete must be a whole number, or -1 for no limit (got "${maxDeleteText}")`);
  const filters: SyncArgs['filters'] = [];
  for (const token of tokens) {
    if (token.kind !== 'option' || (token.name !== 'exclude' && token.name !== 'include')) continue;
    if (!token.value) throw new UsageError(`--${token.name} needs a pattern`);
    filters.push({ kind: token.name, pattern: token.value });
  }
  return {
    src: sides[0],
    dst: sides[1],
    delete: del,
    maxDelete: maxDeleteText === undefined ? 1000 : Number(maxDeleteText),
    dryRun: values['dry-run'] === true,
    sizeOnly: values['size-only'] === true,
    filters,
    concurrency: values.concurrency === undefined ? undefined : positiveInteger(str(values.concurrency as string), '--concurrency'),
  };
}

/** The first bare word is the command; the values of global options are skipped on the way. */
function commandIndex(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--url' || arg === '--api-key' || arg === '--oidc-token-file') i++;
    else if (!arg.startsWith('-')) return i;
  }
  return -1;
}

/** `drive link /path [--expires 7d]`, `drive link --list [/path]` or `drive link --revoke <id>`. */
function linkAction(positionals: string[], values: Record<string, string | boolean | undefined>): LinkAction {
  const revoke = str(values.revoke);
  if (values.list === true && revoke !== undefined) throw new UsageError('link takes --list or --revoke, not both');
  if ((values.list === true || revoke !== undefined) && values.expires !== undefined) throw new UsageError('--expires is for making a link, not with --list or --revoke');
  if (revoke !== undefined) {
    if (positionals.length > 0) throw new UsageError('link --revoke takes the link id alone (see drive link --list)');
    return { action: 'revoke', id: revoke };
  }
  if (values.list === true) {
    const path = positionals.length === 0 ? undefined : single(positionals, 'link --list', 'path');
    return { action: 'list', ...(path === undefined ? {} : { path: drivePath(path, 'path') }) };
  }
  const path = drivePath(single(positionals, 'link', 'file path'), 'path');
  const expires = str(values.expires);
  return { action: 'create', path, ...(expires === undefined ? {} : { expiresIn: duration(expires, '--expires') }) };
}

/**
 * `drive trash ls [/path]`, `drive trash restore <id> [--to /path] [-f]`, `drive trash purge <id>` or
 * `drive trash purge --path /folder`.
 */
function trashAction(positionals: string[], values: Record<string, string | boolean | undefined>): TrashAction {
  const [verb, ...rest] = positionals;
  const to = str(values.to);
  const path = str(values.path);
  if (verb !== 'restore' && (to !== undefined || values.overwrite !== undefined)) throw new UsageError('--to and -f (--overwrite) go with trash restore');
  if (verb !== 'purge' && path !== undefined) throw new UsageError('--path goes with trash purge (trash ls takes the folder as its argument)');
  switch (verb) {
    case 'ls': {
      const folder = rest.length === 0 ? undefined : single(rest, 'trash ls', 'folder');
      return { action: 'ls', ...(folder === undefined ? {} : { path: driveFolder(folder, 'folder') }) };
    }
    case 'restore':
      return { action: 'restore', id: single(rest, 'trash restore', 'trash item id (see drive trash ls)'), ...(to === undefined ? {} : { to: drivePath(to, '--to') }), overwrite: values.overwrite === true };
    case 'purge':
      if (path !== undefined) {
        if (rest.length > 0) throw new UsageError('trash purge takes an item id or --path /folder, not both');
        return { action: 'purge-path', path: driveFolder(path, '--path') };
      }
      return { action: 'purge', id: single(rest, 'trash purge', 'trash item id (see drive trash ls), or --path /folder') };
    case undefined:
      throw new UsageError('trash needs ls, restore or purge');
    default:
      throw new UsageError(`unknown trash command "${verb}": ls, restore or purge`);
  }
}

/**
 * `<from> <to>` of `mv` and `cp`. A `to` ending in `/` is a folder to put `from` in, keeping its name
 * (`/a/b.txt /c/` → `/c/b.txt`), as `mv` and `cp` do on a disk.
 */
function fromTo(positionals: string[], command: string): { from: string; to: string } {
  if (positionals.length !== 2) throw new UsageError(`${command} takes a source and a destination path, got ${positionals.length} path(s)`);
  const from = driveFolder(positionals[0], 'from');
  const to = drivePath(positionals[1], 'to');
  if (from === '/') throw new UsageError(`${command} cannot take the root folder "/"`);
  return { from, to: to.endsWith('/') ? `${to}${posix.basename(from)}` : to };
}

const SECONDS_PER: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90`, `90s`, `30m`, `12h` or `7d` as seconds. */
export function duration(value: string, what: string): number {
  const match = /^([1-9][0-9]{0,8})([smhd]?)$/.exec(value);
  if (!match) throw new UsageError(`${what} must be a duration like 3600, 30m, 12h or 7d (got "${value}")`);
  return Number(match[1]) * SECONDS_PER[match[2] || 's'];
}

function isLocalFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function single(positionals: string[], command: string, what: string, fallback?: string): string {
  if (positionals.length > 1) throw new UsageError(`${command} takes one ${what}, got ${positionals.length}`);
  const value = positionals[0] ?? fallback;
  if (value === undefined) throw new UsageError(`${command} needs a ${what}`);
  return value;
}

function drivePath(value: string, what: string): string {
  if (!value.startsWith('/')) throw new UsageError(`${what} must be a drive path starting with "/" (got "${value}")`);
  return value;
}

/** A folder of the drive, without a trailing slash (but `/` stays `/`). */
function driveFolder(value: string, what: string): string {
  return drivePath(value, what).replace(/(.)\/+$/, '$1');
}

function positiveInteger(value: string | undefined, what: string): number {
  if (value === undefined || !/^[1-9][0-9]*$/.test(value)) throw new UsageError(`${what} must be a positive integer (got "${value}")`);
  return Number(value);
}

function str(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export const USAGE = `drive: upload, list, download, move, copy and delete files in a Drive

Usage:
  drive upload <files or dirs…> [--to /folder] [--concurrency N] [--dry-run] [--skip-existing]
  drive ls [-r] [/folder]
  drive get /path [-o file | -o -]
  drive mkdir /a/b [/c/d …]
  drive rm [-r] /path [/path …]
  drive mv [-f] /from /to       |  drive cp [-f] /from /to
  drive link /path [--expires 7d]  |  drive link --list [/path]  |  drive link --revoke <id>
  drive sync <local folder> /folder  |  drive sync /folder <local folder>   [--delete] [--dry-run] …
  drive watch [/folder] [--cursor-file file]
  drive trash ls [/folder]  |  drive trash restore <id> [--to /path] [-f]
  drive trash purge <id>  |  drive trash purge --path /folder

Options everywhere:
  --url <url>        the API's base URL (default: $DRIVE_URL)
  --api-key <key>    the API key (default: $DRIVE_API_KEY)
  --oidc-token-file <file>  no key: exchange the OIDC token in <file> (read at each exchange) for
                     short-lived keys (default: $DRIVE_OIDC_TOKEN_FILE, $DRIVE_OIDC_TOKEN, or in GitHub
                     Actions the runner's token for $DRIVE_OIDC_AUDIENCE; $DRIVE_OIDC_DRIVE, default "default")
  --json             one JSON document on stdout instead of text (sync: one JSON object a line)
  -q, --quiet        print only failures (and --json's output): no result lines, progress or retry notes
  -h, --help         this text;  -v, --version  the version

upload:
  A directory's files go below --to keeping their tree (./out/a/b.csv --to /in  ->  /in/a/b.csv);
  a file goes to --to/<its name>. Small files share requests; files over 4 MiB go in parallel parts.
  -t, --to <folder>       destination folder (default /)
  -c, --concurrency <n>   requests in flight (default 4)
  -n, --dry-run           say what would be uploaded (and skipped), send nothing
  --skip-existing         skip files whose size and content ETag match the drive's copy

ls:     -r, --recursive   every depth
get:    -o, --output      the local file (default: ./<name>; "-" for stdout)
        A file over 10 MB comes straight from S3 by a short-lived presigned URL; its size and ETag are checked.
rm:     files go; a folder goes if empty, or with -r (--recursive) with everything in it
mv, cp: move or copy a file or a folder (with everything in it) to a new path; its missing parent folders
        are made. A destination ending in "/" is a folder to put it in, keeping its name (/a.txt /b/ -> /b/a.txt).
        A big folder goes on in a job on the server: its progress is shown until it is done.
  -f, --overwrite         replace a file at the destination (never a folder); without it a taken path fails
link:   prints a URL that downloads the file with no key, until it expires or is revoked
  -e, --expires <time>    how long it works: 3600 (seconds), 30m, 12h, 7d (default 1d, at most 30d)
  -l, --list [/path]      the drive's live links (of one file): id, expiry, path; never their URLs
  --revoke <id>           revoke a link by its id: its URL answers 404 from then on

sync:   makes the destination folder equal the source folder; one side local, the other in the drive
        (drive:/path, or a /path when the other side does not start with "/"). Files are compared by
        content (the drive's ETag against the local file's); equal files are not sent.
  --delete                remove what is on the destination but not on the source
  --max-delete <n>        with --delete: refuse the whole run, changing nothing, if it would delete more
                          than n files and folders (default 1000; -1 no limit)
  -n, --dry-run           print the plan, change nothing
  --size-only             compare sizes only (faster, weaker)
  --exclude <glob>        leave out paths matching a .gitignore line (repeatable): *.log, /build, tmp/
  --include <glob>        take back what an earlier --exclude left out (!glob in .gitignore terms); given
                          first, only what it matches is synced: --include '*.csv'
  -c, --concurrency <n>   downloads in flight (default 4)
        One line per change, then a summary; exit 0 when equal, 1 when any file failed (the rest synced),
        2 for bad usage or a refused plan (nothing changed).

watch:  prints the folder's changes as they are made, a line each (--json: one JSON object a line), until
        interrupted
  --cursor-file <file>    resume from the cursor kept in <file>, and keep the cursor there after each page
                          printed: a watch stopped and started again misses nothing (repeats at most a page)

trash:  what deletes and replacements removed, kept for the drive's trash days (7 by default)
  ls [/folder]            the items, newest first (of what was taken from /folder or below it): id,
                          kind, size, when deleted, when purged, path; then the trash's totals
  restore <id>            put the item back where it was taken from, with its id, bytes and ETag (a
                          folder whole; a big one goes on in a job on the server, its progress shown)
  -t, --to <path>         restore it at <path> instead (missing folders above are made)
  -f, --overwrite         replace a file at the destination (it goes to the trash in turn), or restore
                          into a folder there; without it a taken path fails
  purge <id>              delete the item for good now
  purge --path <folder>   delete for good everything taken from <folder> or below it (admin keys)

Exit codes: 0 done; 1 a file or the operation failed (a summary says which); 2 bad usage;
130 interrupted (SIGINT/SIGTERM; what finished is reported).
`;
