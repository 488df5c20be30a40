import { UsageError, connectionOf, parseCommand } from '../../src/cli/args';

describe('Function: parseCommand', () => {
  it('reads upload with its sources, --to (trailing slash dropped) and flags', () => {
    expect(parseCommand(['upload', './out', 'a.csv', '--to', '/ingest/2026-01-01/', '-c', '8', '--dry-run', '--skip-existing', '--json'])).toEqual({
      name: 'upload',
      sources: ['./out', 'a.csv'],
      to: '/ingest/2026-01-01',
      concurrency: 8,
      dryRun: true,
      skipExisting: true,
      json: true,
      url: undefined,
      apiKey: undefined,
    });
  });

  it('uploads to / by default', () => {
    expect(parseCommand(['upload', 'x'])).toMatchObject({ to: '/', dryRun: false, skipExisting: false, concurrency: undefined });
  });

  it('takes global options before the command too', () => {
    expect(parseCommand(['--url', 'http://h:1', '--api-key', 'k', 'ls', '-r', '/a'])).toEqual({
      name: 'ls',
      folder: '/a',
      recursive: true,
      json: false,
      url: 'http://h:1',
      apiKey: 'k',
    });
  });

  it('reads ls, get, mkdir and rm', () => {
    expect(parseCommand(['ls'])).toMatchObject({ name: 'ls', folder: '/', recursive: false });
    expect(parseCommand(['get', '/a/b.txt', '-o', 'local.txt'])).toMatchObject({ name: 'get', path: '/a/b.txt', output: 'local.txt' });
    expect(parseCommand(['mkdir', '/a/b', '/c'])).toMatchObject({ name: 'mkdir', paths: ['/a/b', '/c'] });
    expect(parseCommand(['rm', '-r', '/a'])).toMatchObject({ name: 'rm', paths: ['/a'], recursive: true });
    expect(parseCommand(['rm', '/a.txt', '/b/c.txt'])).toMatchObject({ name: 'rm', paths: ['/a.txt', '/b/c.txt'], recursive: false });
    expect(parseCommand(['rm', '/a'])).toMatchObject({ recursive: false });
  });

  it('reads link: make (with --expires as seconds), --list (of one file or all), --revoke', () => {
    expect(parseCommand(['link', '/a/b.txt'])).toMatchObject({ name: 'link', action: 'create', path: '/a/b.txt' });
    expect(parseCommand(['link', '/a/b.txt', '--expires', '7d', '--json'])).toMatchObject({ name: 'link', action: 'create', path: '/a/b.txt', expiresIn: 604_800, json: true });
    expect(parseCommand(['link', '/a/b.txt', '-e', '90'])).toMatchObject({ expiresIn: 90 });
    expect(parseCommand(['link', '/a/b.txt', '-e', '30m'])).toMatchObject({ expiresIn: 1800 });
    expect(parseCommand(['link', '/a/b.txt', '-e', '12h'])).toMatchObject({ expiresIn: 43_200 });
    expect(parseCommand(['link', '--list'])).toEqual({ name: 'link', action: 'list', json: false, url: undefined, apiKey: undefined });
    expect(parseCommand(['link', '-l', '/a/b.txt'])).toMatchObject({ name: 'link', action: 'list', path: '/a/b.txt' });
    expect(parseCommand(['link', '--revoke', 'f'.repeat(64)])).toMatchObject({ name: 'link', action: 'revoke', id: 'f'.repeat(64) });
  });

  it('reads mv and cp: a source and a destination, -f or --overwrite, --json', () => {
    expect(parseCommand(['mv', '/a/b.txt', '/c/d.txt'])).toEqual({ name: 'mv', from: '/a/b.txt', to: '/c/d.txt', overwrite: false, json: false, url: undefined, apiKey: undefined });
    expect(parseCommand(['cp', '-f', '/a/b.txt', '/c/d.txt', '--json'])).toMatchObject({ name: 'cp', from: '/a/b.txt', to: '/c/d.txt', overwrite: true, json: true });
    expect(parseCommand(['mv', '/a', '/b', '--overwrite'])).toMatchObject({ name: 'mv', overwrite: true });
  });

  it('reads trash: ls (of a folder or all), restore with --to and -f, purge of an id or of --path', () => {
    expect(parseCommand(['trash', 'ls'])).toEqual({ name: 'trash', action: 'ls', json: false, url: undefined, apiKey: undefined });
    expect(parseCommand(['trash', 'ls', '/reports/', '--json'])).toMatchObject({ name: 'trash', action: 'ls', path: '/reports', json: true });
    expect(parseCommand(['trash', 'restore', 'item-1'])).toMatchObject({ name: 'trash', action: 'restore', id: 'item-1', overwrite: false });
    expect(parseCommand(['trash', 'restore', '-f', 'item-1', '--to', '/old/a.txt'])).toMatchObject({ action: 'restore', id: 'item-1', to: '/old/a.txt', overwrite: true });
    expect(parseCommand(['trash', 'restore', 'item-1', '--overwrite'])).toMatchObject({ overwrite: true });
    expect(parseCommand(['trash', 'purge', 'item-1'])).toMatchObject({ name: 'trash', action: 'purge', id: 'item-1' });
    expect(parseCommand(['trash', 'purge', '--path', '/reports/'])).toMatchObject({ name: 'trash', action: 'purge-path', path: '/reports' });
  });

  it('puts the source inside a destination that ends in "/", keeping its name', () => {
    expect(parseCommand(['mv', '/a/b.txt', '/archive/'])).toMatchObject({ from: '/a/b.txt', to: '/archive/b.txt' });
    expect(parseCommand(['cp', '/reports/2026/', '/backup/'])).toMatchObject({ from: '/reports/2026', to: '/backup/2026' });
    expect(parseCommand(['mv', '/a.txt', '/'])).toMatchObject({ to: '/a.txt' });
  });

  it('answers help and version', () => {
    expect(parseCommand([])).toEqual({ name: 'help' });
    expect(parseCommand(['--help'])).toEqual({ name: 'help' });
    expect(parseCommand(['upload', '--help'])).toEqual({ name: 'help', topic: 'upload' });
    expect(parseCommand(['--version'])).toEqual({ name: 'version' });
  });

  it.each([
    [['frobnicate'], /unknown command "frobnicate"/],
    [['upload'], /at least one file/],
    [['upload', 'x', '--to', 'relative'], /must be a drive path starting with "\/"/],
    [['upload', 'x', '--concurrency', '0'], /--concurrency must be a positive integer/],
    [['upload', 'x', '--concurrency', 'many'], /--concurrency must be a positive integer/],
    [['ls', '--bogus'], /Unknown option '--bogus'/],
    [['ls', '/a', '/b'], /ls takes one folder/],
    [['get'], /get needs a path/],
    [['get', 'a.txt'], /path must be a drive path/],
    [['rm', '-o', 'x', '/a'], /Unknown option '-o'/],
    [['rm'], /rm needs at least one path/],
    [['--json'], /no command given/],
    [['link'], /link needs a file path/],
    [['link', 'a.txt'], /path must be a drive path/],
    [['link', '/a', '/b'], /link takes one file path/],
    [['link', '/a', '--expires', '1w'], /--expires must be a duration like 3600, 30m, 12h or 7d/],
    [['link', '/a', '--expires', '0'], /--expires must be a duration/],
    [['link', '--list', '--revoke', 'x'], /--list or --revoke, not both/],
    [['link', '--list', '--expires', '1d'], /--expires is for making a link/],
    [['link', '--revoke', 'x', '/a'], /takes the link id alone/],
    [['mv', '/a'], /mv takes a source and a destination path, got 1/],
    [['cp', '/a', '/b', '/c'], /cp takes a source and a destination path, got 3/],
    [['mv', 'a.txt', '/b.txt'], /from must be a drive path/],
    [['cp', '/a.txt', 'b.txt'], /to must be a drive path/],
    [['mv', '/', '/b'], /mv cannot take the root folder/],
    [['mv', '-r', '/a', '/b'], /Unknown option '-r'/],
    [['trash'], /trash needs ls, restore or purge/],
    [['trash', 'empty'], /unknown trash command "empty": ls, restore or purge/],
    [['trash', 'ls', 'reports'], /folder must be a drive path/],
    [['trash', 'restore'], /trash restore needs a trash item id/],
    [['trash', 'restore', 'a', 'b'], /trash restore takes one trash item id/],
    [['trash', 'restore', 'a', '--to', 'b.txt'], /--to must be a drive path/],
    [['trash', 'purge'], /trash purge needs a trash item id \(see drive trash ls\), or --path \/folder/],
    [['trash', 'purge', 'a', '--path', '/r'], /an item id or --path \/folder, not both/],
    [['trash', 'ls', '--path', '/r'], /--path goes with trash purge/],
    [['trash', 'purge', 'a', '-f'], /--to and -f \(--overwrite\) go with trash restore/],
  ])('refuses %j with a UsageError', (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
    expect(() => parseCommand(argv)).toThrow(message);
  });
});

describe('Function: connectionOf', () => {
  it('takes flags over DRIVE_URL and DRIVE_API_KEY', () => {
    const env = { DRIVE_URL: 'http://env:1', DRIVE_API_KEY: 'env-key' };
    expect(connectionOf({}, env)).toEqual({ url: 'http://env:1', apiKey: 'env-key' });
    expect(connectionOf({ url: 'https://flag', apiKey: 'flag-key' }, env)).toEqual({ url: 'https://flag', apiKey: 'flag-key' });
  });

  it('names what is missing or wrong', () => {
    expect(() => connectionOf({}, {})).toThrow(/set DRIVE_URL or pass --url/);
    expect(() => connectionOf({}, { DRIVE_URL: 'http://h' })).toThrow(/set DRIVE_API_KEY or pass --api-key/);
    expect(() => connectionOf({}, { DRIVE_URL: 'h:1', DRIVE_API_KEY: 'k' })).toThrow(/must be an http\(s\) URL/);
  });

  it('without a key, takes an OIDC token: --oidc-token-file, DRIVE_OIDC_TOKEN_FILE, DRIVE_OIDC_TOKEN, then the GitHub Actions runner', () => {
    const url = 'http://h:1';
    const actions = { ACTIONS_ID_TOKEN_REQUEST_URL: 'http://runner/t?api-version=2.0', ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'rt', DRIVE_OIDC_AUDIENCE: 'drive' };
    expect(connectionOf({ oidcTokenFile: '/var/run/token' }, { DRIVE_URL: url, DRIVE_OIDC_TOKEN: 'jwt' })).toEqual({ url, oidc: { kind: 'file', path: '/var/run/token' } });
    expect(connectionOf({}, { DRIVE_URL: url, DRIVE_OIDC_TOKEN_FILE: '/t', DRIVE_OIDC_TOKEN: 'jwt' })).toEqual({ url, oidc: { kind: 'file', path: '/t' } });
    expect(connectionOf({}, { DRIVE_URL: url, DRIVE_OIDC_TOKEN: 'jwt', ...actions })).toEqual({ url, oidc: { kind: 'token', token: 'jwt' } });
    expect(connectionOf({}, { DRIVE_URL: url, ...actions })).toEqual({ url, oidc: { kind: 'github-actions', requestUrl: actions.ACTIONS_ID_TOKEN_REQUEST_URL, requestToken: 'rt', audience: 'drive' } });
    // A key, where one is given, comes first; half the runner's variables are none.
    expect(connectionOf({}, { DRIVE_URL: url, DRIVE_API_KEY: 'k', DRIVE_OIDC_TOKEN: 'jwt' })).toEqual({ url, apiKey: 'k' });
    expect(() => connectionOf({}, { DRIVE_URL: url, ACTIONS_ID_TOKEN_REQUEST_URL: 'http://runner/t?x=1' })).toThrow(/set DRIVE_API_KEY or pass --api-key/);
  });

  it('reads --oidc-token-file before or after the command', () => {
    expect(parseCommand(['--oidc-token-file', '/t', 'ls'])).toMatchObject({ name: 'ls', oidcTokenFile: '/t' });
    expect(parseCommand(['ls', '--oidc-token-file', '/t', '/a'])).toMatchObject({ name: 'ls', folder: '/a', oidcTokenFile: '/t' });
  });
});
