import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

describe('test/support/generated/drive-api.ts (openapi-typescript, offline)', () => {
  it('is what openapi-typescript generates from docs/openapi.json now (npm run openapi writes both)', () => {
    // openapi-typescript is an ES module: run as its CLI, which prints the types when given no output file.
    const cli = join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
    const generated = execFileSync(process.execPath, [cli, join(ROOT, 'docs', 'openapi.json')], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(generated).toBe(readFileSync(join(ROOT, 'test', 'support', 'generated', 'drive-api.ts'), 'utf8'));
  });
});
