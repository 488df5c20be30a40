import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SETTINGS, environmentOf, rawSetting, setting, settingsTable } from '../../functions/config';

const ROOT = join(__dirname, '..', '..');

/** Every file below `dir` (relative to the project) whose name ends with one of `extensions`. */
function filesBelow(dir: string, extensions: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
      const full = join(path, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (extensions.some((ext) => name.endsWith(ext))) out.push(relative(ROOT, full));
    }
  };
  walk(join(ROOT, dir));
  return out;
}

/** Constants of the code spelled like variables: the pattern of drive ids, a client test's batch limits. */
const NOT_VARIABLES = new Set(['DRIVE_ID', 'DRIVE_LIMITS']);

describe('the table of settings (functions/config.ts)', () => {
  const names = new Set(Object.values(SETTINGS).flatMap((s): string[] => ('formerly' in s && s.formerly ? [s.name, s.formerly] : [s.name])));

  it('names every DRIVE_ variable the code, the tests and the docs mention', () => {
    const sources = ['functions', 'lib', 'bin', 'client/src', 'client/bin', 'client/test', 'test', 'dashboard', 'scripts', 'docs'].flatMap((dir) => filesBelow(dir, ['.ts', '.js', '.cjs', '.mjs', '.md']));
    const unknown = new Set<string>();
    for (const file of [...sources, 'README.md']) {
      for (const [name] of readFileSync(join(ROOT, file), 'utf8').matchAll(/\bDRIVE_[A-Z0-9_]*[A-Z0-9]\b/g)) if (!NOT_VARIABLES.has(name) && !names.has(name)) unknown.add(`${name} (${file})`);
    }
    expect([...unknown]).toEqual([]);
  });

  it('is what docs/configuration.md shows', () => {
    const text = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
    const table = /<!-- settings table:[^>]*-->\n([\s\S]*?)\n<!-- end of settings table -->/.exec(text)?.[1];
    // On a change of the table, paste what this expects between the markers.
    expect(table).toBe(settingsTable());
  });

  it("is the only place under functions/ that reads the environment, Lambda's own variables included", () => {
    const readers = filesBelow('functions', ['.ts']).filter((file) => readFileSync(join(ROOT, file), 'utf8').includes('process.env'));
    // Lambda's variables (the trace header, the function's name, its log level) through `runtimeVariable`.
    expect(readers.sort()).toEqual(['functions/config.ts']);
  });
});

describe('Function: setting', () => {
  it('reads DRIVE_JOB_STEP_MS, and DRIVE_DELETE_STEP_MS when only the old name is set', () => {
    expect(setting('jobStepMs', {})).toBeUndefined();
    expect(setting('jobStepMs', { DRIVE_DELETE_STEP_MS: '30' })).toBe(30);
    expect(setting('jobStepMs', { DRIVE_JOB_STEP_MS: '20', DRIVE_DELETE_STEP_MS: '30' })).toBe(20);
    expect(rawSetting('jobStepMs', { DRIVE_DELETE_STEP_MS: '30' })).toBe('30');
    // An empty variable is unset: it neither hides the former name nor passes on as a value.
    expect(setting('jobStepMs', { DRIVE_JOB_STEP_MS: '', DRIVE_DELETE_STEP_MS: '30' })).toBe(30);
    expect(rawSetting('keyCacheSeconds', { DRIVE_KEY_CACHE_SECONDS: '' })).toBeUndefined();
  });

  it('names the variable it read in a refusal, the old name too', () => {
    expect(() => setting('jobStepMs', { DRIVE_DELETE_STEP_MS: 'soon' })).toThrow('DRIVE_DELETE_STEP_MS must be a whole number of milliseconds (got "soon")');
    expect(() => setting('jobStepMs', { DRIVE_JOB_STEP_MS: '-1' })).toThrow('DRIVE_JOB_STEP_MS must be a whole number of milliseconds (got "-1")');
  });

  it('keeps the messages of the parsers it replaced', () => {
    expect(() => setting('nodesTable', {})).toThrow('DRIVE_NODES_TABLE environment variable is not set');
    expect(() => setting('bucket', { DRIVE_BUCKET: '' })).toThrow('DRIVE_BUCKET environment variable is not set');
    expect(() => setting('maxFileBytes', { DRIVE_MAX_FILE_BYTES: '1.5' })).toThrow('DRIVE_MAX_FILE_BYTES must be a positive whole number (got "1.5")');
    expect(() => setting('fsckGraceMinutes', { DRIVE_FSCK_GRACE_MINUTES: 'x' })).toThrow('DRIVE_FSCK_GRACE_MINUTES must be a whole number (got "x")');
    expect(() => setting('localSweepSeconds', { DRIVE_LOCAL_SWEEP_SECONDS: '0' })).toThrow('DRIVE_LOCAL_SWEEP_SECONDS must be a positive number of seconds (got "0")');
    expect(() => setting('rateLimits', { DRIVE_RATE_LIMITS: 'upload=fast' })).toThrow('DRIVE_RATE_LIMITS entry "upload=fast" is not <endpoint>=<requests per minute>');
  });

  it('gives the defaults of the table', () => {
    expect(setting('keyCacheSeconds', {})).toBe(30);
    expect(setting('fsckSliceObjects', { DRIVE_FSCK_SLICE_OBJECTS: '0' })).toBe(1);
    expect(setting('corsOrigins', { DRIVE_CORS_ORIGINS: ' https://a.example , ,https://b.example' })).toEqual(['https://a.example', 'https://b.example']);
    expect(setting('apiScheme', {})).toBe('https');
    expect(setting('metricsNamespace', { DRIVE_METRICS_NAMESPACE: '' })).toBe('Drive');
    expect(setting('dataDir', {})).toBe('.drive-data');
    expect(setting('rateLimits', { DRIVE_RATE_LIMITS: 'off' })).toBeUndefined();
  });
});

describe('Function: environmentOf', () => {
  it('names each given setting as the functions read it, and leaves out what is undefined', () => {
    expect(environmentOf({ nodesTable: 'n', corsOrigins: undefined, jobStepMs: '5' })).toEqual({ DRIVE_NODES_TABLE: 'n', DRIVE_JOB_STEP_MS: '5' });
  });
});
