import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const CLIENT = resolve(__dirname, '..', '..');
const TSC = require.resolve('typescript/bin/tsc');
const run = promisify(execFile);

/** Runs `node <args>` in `cwd`; resolves with its stdout. */
async function node(cwd: string, ...args: string[]): Promise<string> {
  return (await run(process.execPath, args, { cwd, env: { ...process.env, NODE_PATH: '' } })).stdout;
}

describe('npm run build -w client', () => {
  let app: string;
  let installed: string;

  beforeAll(async () => {
    // Prepare: build into a package installed in a throwaway app, as a consumer would have it.
    app = await mkdtemp(join(tmpdir(), 'drive-client-build-'));
    installed = join(app, 'node_modules', '@drive', 'client');
    await mkdir(installed, { recursive: true });
    await node(CLIENT, 'scripts/build.mjs', join(installed, 'dist'));
    await cp(join(CLIENT, 'package.json'), join(installed, 'package.json'));
    await cp(join(CLIENT, 'bin'), join(installed, 'bin'), { recursive: true });
  });

  afterAll(() => rm(app, { recursive: true, force: true }));

  it('gives an ESM build that `import` resolves through the exports map', async () => {
    const out = await node(app, '--input-type=module', '-e', "import { Drive, DriveError, partSizeFor } from '@drive/client'; const d = new Drive({ baseUrl: 'http://h', apiKey: 'k' }); console.log(typeof d.uploadMany, new DriveError('x', 'm', 1) instanceof Error, partSizeFor(1), import.meta.resolve('@drive/client'))");
    expect(out.trim().split(' ')).toEqual(['function', 'true', String(8 * 1024 * 1024), expect.stringMatching(/\/dist\/index\.mjs$/)]);
  });

  it('gives a CommonJS build that `require` resolves through the exports map', async () => {
    const out = await node(app, '-e', "const { Drive, etagForm } = require('@drive/client'); console.log(typeof new Drive({ baseUrl: 'http://h', apiKey: 'k' }).download, etagForm('0123456789abcdef0123456789abcdef-2'), require.resolve('@drive/client'))");
    expect(out.trim().split(' ')).toEqual(['function', 'multipart', expect.stringMatching(/\/dist\/index\.cjs$/)]);
  });

  it('gives type declarations that TypeScript finds for both import and require', async () => {
    await writeFile(join(app, 'esm.mts'), "import { Drive, type UploadReport } from '@drive/client';\nconst report: Promise<UploadReport> = new Drive({ baseUrl: 'http://h', apiKey: 'k' }).uploadMany([{ path: '/a', data: 'x' }]);\nvoid report;\n");
    await writeFile(join(app, 'cjs.cts'), "import client = require('@drive/client');\nconst drive: client.Drive = new client.Drive({ baseUrl: 'http://h', apiKey: 'k' });\nvoid drive.list('/');\n");
    await writeFile(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', strict: true, noEmit: true, types: ['node'], typeRoots: [join(CLIENT, '..', 'node_modules', '@types')] }, files: ['esm.mts', 'cjs.cts'] }));
    await expect(node(app, TSC, '-p', 'tsconfig.json')).resolves.toBe('');
    expect(await readFile(join(installed, 'dist', 'types', 'index.d.ts'), 'utf8')).toContain("export { Drive } from './drive'");
  });

  it('installs from its packed tarball, as docs/client.md says, and runs as `drive` outside the clone', async () => {
    // Prepare: pack the built package (its prepack build has run above) and install it into a scratch prefix.
    const npm = (cwd: string, ...args: string[]) => run('npm', [...args, '--no-audit', '--no-fund', '--ignore-scripts'], { cwd, env: { ...process.env, npm_config_update_notifier: 'false' } });
    const { stdout } = await npm(installed, 'pack', '--pack-destination', app);
    const tarball = join(app, stdout.trim().split('\n').pop()!);
    const prefix = join(app, 'global');
    await npm(app, 'install', '--global', '--offline', '--prefix', prefix, tarball);

    // Act: run the installed command from a folder with no package.json above it.
    const version = await node(app, join(prefix, 'bin', 'drive'), '--version');

    // Assess: it is this package, at this version.
    expect(version.trim()).toBe(JSON.parse(await readFile(join(CLIENT, 'package.json'), 'utf8')).version);
    expect(JSON.parse(await readFile(join(prefix, 'lib', 'node_modules', '@drive', 'client', 'package.json'), 'utf8')).name).toBe('@drive/client');
  });

  it('runs the built CLI from the bin, with no tsx to fall back on', async () => {
    expect((await node(app, join(installed, 'bin', 'drive.cjs'), '--version')).trim()).toBe(JSON.parse(await readFile(join(CLIENT, 'package.json'), 'utf8')).version);
  });
});
