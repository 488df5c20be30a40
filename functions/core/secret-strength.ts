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

/** A repeat shorter than this is counted as characters: pairs recur by chance in random secrets. */
const MIN_REPEAT = 3;

/** Past this many characters a secret is judged by its start: the estimate is quadratic in the length. */
const MAX_EXAMINED = 256;

/**
 * How many bits a guesser needs at most to find `secret`, estimated as a compressor would store it. Read
 * from left to right, a run of 3 or more characters that already appeared (overlaps included, as in
 * `aaaa` or `passwordpassword`) costs where it was and how long it is, 2 × log2 of the length; every other
 * character costs log2 of the alphabet its kinds span (26 lower case, 26 upper case, 10 digits, 7 symbols).
 * A random secret has no such repeats, so it keeps its full measure; a word typed again, a character held
 * down or a short pattern over and over costs almost nothing. Runs such as `abcd` are not discounted.
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
    const repeat = longestRepeat(chars, i);
    if (repeat >= MIN_REPEAT) {
      bits += reference;
      i += repeat;
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

/** Why `secret` is too easy to guess to be an API key's secret, or undefined if it is not. Never quotes it. */
export function weakSecretProblem(secret: string): string | undefined {
  const bits = secretBits(secret);
  if (bits >= MIN_SECRET_BITS) return undefined;
  return `the secret is too easy to guess (about ${Math.floor(bits)} bits; repeats count once); use at least ${MIN_SECRET_BITS} random bits: 32 hex digits (openssl rand -hex 16) or 32 base64 characters (openssl rand -base64 24)`;
}
