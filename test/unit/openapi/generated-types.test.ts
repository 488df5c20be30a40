import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeArgs } from '../../support/host-bundle-files';

const ROOT = join(__dirname, '..', '..', '..');

describe('client/src/generated/drive-api.ts (openapi-typescript, offline)', () => {
  // openapi-typescript is an ES module: run in a process of its own, as `npm run openapi` runs it (from the
  // run's bundle where the integration project's globalSetup built one, test/support/host-bundle.ts; else tsx).
  const generated = () => execFileSync(process.execPath, [...nodeArgs('bin/openapi.ts'), '--print-types'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  it('is what openapi-typescript generates from the document now (npm run openapi writes it), its file parts typed as Blobs', () => {
    const text = generated();
    expect(text).toBe(readFileSync(join(ROOT, 'client', 'src', 'generated', 'drive-api.ts'), 'utf8'));
    // A FormData takes a Blob as it is: a generated client sends the upload form's files with no cast.
    expect(text).toMatch(/files: Blob\[\];/);
  });
});
