/** The least a secret that a person supplies (DRIVE_API_KEYS) must carry: what `newSecret` gives is 256. */
export const MIN_SECRET_BITS = 128;

/** Kinds of characters and how many each holds: a secret that uses a kind is counted as drawing from all of it. */
const KINDS: readonly [RegExp, number][] = [
  [/[a-z]/, 26],
  [/[A-Z]/, 26],
  [/[0-9]/, 10],
  // DRIVE_API_KEYS allows -._~+/ and = padding besides letters and digits.
  [/[^A-Za-z0-9]/, 7],
];

/** A repeat or run shorter than this is counted as characters: pairs recur by chance in random secrets. */
const MIN_REPEAT = 3;

/** Rows of a keyboard: a stretch along one, either way and in either case, is guessed like `abcd`. */
const KEYBOARD_ROWS: readonly string[] = ['1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'].flatMap((row) => [row, [...row].reverse().join('')]);

/** Past this many characters a secret is judged by its start: the estimate is quadratic in the length. */
const MAX_EXAMINED = 256;

/**
 * How many bits a guesser needs at most to find `secret`, estimated as a compressor would store it. Read
 * from left to right, a stretch of 3 or more characters that already appeared (overlaps included, as in
 * `aaaa` or `passwordpassword`), that climbs or falls one character code a step (`abcd`, `9876`), or that
 * follows a keyboard row either way (`qwerty`, `lkjh`, `7890`) costs one reference, 2 × log2 of the
 * secret's length, however long; every other character costs log2 of the alphabet its kinds span (26 lower
 * case, 26 upper case, 10 digits, 7 symbols). A random secret seldom holds such stretches, so it keeps
 * nearly its full measure; a word typed again, a character held down, the alphabet or a keyboard row costs
 * almost nothing.
 */
export function secretBits(secret: string): number {
  const chars = [...secret].slice(0, MAX_EXAMINED);
  const n = chars.length;
  if (n === 0) return 0;
  const alphabet = KINDS.filter(([kind]) => chars.some((ch) => kind.test(ch))).reduce((sum, [, size]) => sum + size, 0);
  const literal = Math.log2(Math.max(alphabet, 2));
  const reference = 2 * Math.log2(Math.max(n, 2));
  let bits = 0;
  for (let i = 0; i < n; ) {
    const stretch = Math.max(longestRepeat(chars, i), longestStep(chars, i), longestKeyboardRun(chars, i));
    if (stretch >= MIN_REPEAT) {
      bits += reference;
      i += stretch;
    } else {
      bits += literal;
      i += 1;
    }
  }
  return bits;
}

/** The length of the longest run starting at `i` that also starts earlier (it may run on into `i`). */
function longestRepeat(chars: readonly string[], i: number): number {
  let best = 0;
  for (let j = 0; j < i; j++) {
    let k = 0;
    while (i + k < chars.length && chars[j + k] === chars[i + k]) k++;
    if (k > best) best = k;
  }
  return best;
}

/** The length of the longest run starting at `i` whose character codes climb, or fall, by one a step. */
function longestStep(chars: readonly string[], i: number): number {
  let best = 1;
  for (const step of [1, -1]) {
    let k = 1;
    while (i + k < chars.length && chars[i + k].codePointAt(0) === (chars[i + k - 1].codePointAt(0) ?? 0) + step) k++;
    best = Math.max(best, k);
  }
  return best;
}

/** The length of the longest run starting at `i` along one keyboard row, one way or the other, in any case. */
function longestKeyboardRun(chars: readonly string[], i: number): number {
  let best = 0;
  for (const row of KEYBOARD_ROWS) {
    const start = row.indexOf(chars[i].toLowerCase());
    if (start < 0) continue;
    let k = 0;
    while (i + k < chars.length && start + k < row.length && chars[i + k].toLowerCase() === row[start + k]) k++;
    best = Math.max(best, k);
  }
  return best;
}

/** Why `secret` is too easy to guess to be an API key's secret, or undefined if it is not. Never quotes it. */
export function weakSecretProblem(secret: string): string | undefined {
  const bits = secretBits(secret);
  if (bits >= MIN_SECRET_BITS) return undefined;
  return `the secret is too easy to guess (about ${Math.floor(bits)} bits; repeats, runs such as abcd and keyboard rows count once); use at least ${MIN_SECRET_BITS} random bits: 32 hex digits (openssl rand -hex 16) or 32 base64 characters (openssl rand -base64 24)`;
}
