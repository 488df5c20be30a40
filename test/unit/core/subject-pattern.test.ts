import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { subjectMatches } from '../../../functions/core/trust';

/** The matcher as it was (one RegExp, `*` as `[^:]*`): the meaning to keep, safe only on short patterns. */
const byRegExp = (pattern: string, subject: string): boolean => {
  const escaped = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^:]*')}$`, 'u').test(subject);
};

describe('Function: subjectMatches', () => {
  it.each([
    ['*', '', true],
    ['*', 'anything', true],
    ['*', 'a:b', false],
    ['**', 'abc', true],
    ['a*', 'a', true],
    ['a**', 'a', true],
    ['*a', 'ba', true],
    ['*a', 'ab', false],
    // The last `*` must take back what it gave: the first "a" is not the one that ends the match.
    ['*ab', 'aab', true],
    ['a*ab', 'aaab', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'aXbY', false],
    ['a*b*c', 'acb', false],
    ['x:*', 'x:', true],
    ['x:*', 'x', false],
    ['*:*', ':', true],
    ['x:*:z', 'x:y:y:z', false],
    // Glob and RegExp characters other than `*` stand for themselves.
    ['a?c*', 'abc', false],
    ['a?c*', 'a?cd', true],
    ['[ab]*', 'a', false],
    // A `*` takes whole characters, never half of one outside the Basic Multilingual Plane.
    ['*😀', 'é😀', true],
    ['a*😀*', 'ab😀', true],
    ['*\uDE00', '😀', false],
  ])('%j against %j: %s', (pattern, subject, matches) => {
    expect(subjectMatches(pattern, subject)).toBe(matches);
  });

  it('means what the RegExp it replaced meant, on short patterns and subjects', () => {
    const text = (maxLength: number) => fc.array(fc.constantFrom('a', 'b', ':', '*', '.', '😀'), { maxLength }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(text(8), text(10), (pattern, subject) => {
        // A subject never holds `*` in practice, but nothing forbids it.
        expect(subjectMatches(pattern, subject)).toBe(byRegExp(pattern, subject));
      }),
      { numRuns: 2_000 },
    );
  });

  // Review r2: the matcher was one backtracking RegExp, so a pattern with several `*` in one segment took time
  // exponential in their number against a subject that does not match. The subject is the token's, and its last
  // segment (a branch name on GitHub Actions) is whatever the job's author chose. The match runs in a child so
  // that the old matcher (years, at 200 characters) fails this test instead of hanging the suite: the child's
  // 50 s limit is a backstop, not a measure of speed; the new matcher takes at most pattern × segment (here
  // 26 × 200) steps.
  it('matches a many-star pattern against a long non-matching subject without backtracking', () => {
    const pattern = 'repo:acme/etl:ref:refs/heads/*a*a*a*a*a*a*a*a*a*a*a*a*b';
    const subject = `repo:acme/etl:ref:refs/heads/${'a'.repeat(200)}`;
    const code = `process.stdout.write(String((${subjectMatches.toString()})(${JSON.stringify(pattern)}, ${JSON.stringify(subject)})))`;
    const out = execFileSync(process.execPath, ['-e', code], { timeout: 50_000, killSignal: 'SIGKILL' }).toString();
    expect(out).toBe('false');
  });
});
