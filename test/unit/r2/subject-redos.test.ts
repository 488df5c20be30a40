import { execFileSync } from 'node:child_process';
import { subjectMatches } from '../../../functions/core/trust';

// r2 finding: subjectMatches turns each `*` into `[^:]*` in one backtracking RegExp, so a pattern with several
// `*` in one segment takes time exponential in their number against a subject that does not match. The subject
// is the token's, and its last segment (a branch name on GitHub Actions) is whatever the job's author chose: any
// repository's workflow may ask for a token of any audience. Matching one rule against one 60-character branch
// should take milliseconds, not minutes (run in a child with a 5 s limit so this test never hangs the suite).

it('matches a many-star pattern against a long non-matching subject in linear-ish time', () => {
  const pattern = 'repo:acme/etl:ref:refs/heads/*a*a*a*a*a*a*a*a*a*a*a*a*b';
  const subject = `repo:acme/etl:ref:refs/heads/${'a'.repeat(60)}`;
  const code = `process.stdout.write(String((${subjectMatches.toString()})(${JSON.stringify(pattern)}, ${JSON.stringify(subject)})))`;
  const out = execFileSync(process.execPath, ['-e', code], { timeout: 5_000, killSignal: 'SIGKILL' }).toString();
  expect(out).toBe('false');
});
