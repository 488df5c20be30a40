import { MIN_SECRET_BITS, secretBits, weakSecretProblem } from '../../../functions/core/secret-strength';
import { parseApiKeys } from '../../../lib/local-host';

describe('Function: secretBits', () => {
  it.each([
    ['a word typed again and again', 'passwordpasswordpassword1234'],
    ['a pattern said twice', 'abcdefghijklmnopabcdefghijklmnop'],
    ['a character held down', 'a'.repeat(64)],
    ['two characters in turn', 'ab'.repeat(40)],
    ['a short secret of every kind', 'Xy7-Qz2.'],
    ['the alphabet and a digit', 'abcdefghijklmnopqrstuvwxyz0'],
    ['three keyboard rows and two digits', 'qwertyuiopasdfghjklzxcvbnm12'],
    ['the digits and the alphabet', '1234567890abcdefghijklmnopqrstuvwxyz'],
    ['runs down and in capitals', 'ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210'],
    ['keyboard rows backwards', 'poiuytrewqlkjhgfdsamnbvcxz0987654321'],
  ])('counts %s as under 128 bits', (_, secret) => {
    expect(secretBits(secret)).toBeLessThan(MIN_SECRET_BITS);
  });

  it('counts random secrets of the sizes the docs advise as 128 bits or more', () => {
    // A random secret seldom repeats 3 characters or holds a run (`abc`, `890`), and then costs a few bits
    // less: none of these may fail. The bytes are seeded, so the run is the same every time: with fresh
    // random bytes, about one run in 1,500 drew a hex secret of digits alone (a chance of 3 in 10 million
    // a secret), which the estimate counts at log2(10) a digit, 106 bits, and failed.
    const bytes = seededBytes(23);
    for (let i = 0; i < 2000; i++) {
      expect(secretBits(bytes(16).toString('hex'))).toBeGreaterThanOrEqual(MIN_SECRET_BITS);
      expect(secretBits(bytes(24).toString('base64'))).toBeGreaterThanOrEqual(MIN_SECRET_BITS);
      expect(secretBits(bytes(24).toString('base64url'))).toBeGreaterThanOrEqual(MIN_SECRET_BITS);
      expect(secretBits(`drv_${bytes(32).toString('base64url')}`)).toBeGreaterThanOrEqual(MIN_SECRET_BITS);
    }
  });

  it('counts a run or a keyboard row as one reference however long it is', () => {
    // Padded to one length (the `~`s are one repeat), a run of 3 letters and one of 26 cost the same bits.
    const tail = 'Vd2kR9xWm4Tz8Lb1Nc6Hs3Pf5Yg0JwE';
    expect(secretBits(`abc${tail}`.padEnd(64, '~'))).toBeCloseTo(secretBits(`abcdefghijklmnopqrstuvwxyz${tail}`.padEnd(64, '~')), 5);
    expect(secretBits(`qwe${tail}`.padEnd(64, '~'))).toBeCloseTo(secretBits(`qwertyuiop${tail}`.padEnd(64, '~')), 5);
  });

  it('counts a repeat as one reference however long it is', () => {
    // The reference names where and how long, in 2 × log2(length) bits: 8 → 10 bits from 16 to 32 characters.
    expect(secretBits('passwordpasswordpasswordpassword') - secretBits('passwordpassword')).toBeCloseTo(2, 5);
  });
});

describe('Function: weakSecretProblem', () => {
  it('says how to make a strong one, without quoting the secret', () => {
    const problem = weakSecretProblem('passwordpasswordpassword1234');
    expect(problem).toMatch(/too easy to guess.*openssl rand -hex 16/);
    expect(problem).not.toContain('password');
    expect(weakSecretProblem(seededBytes(7)(16).toString('hex'))).toBeUndefined();
  });
});

describe('Function: parseApiKeys (DRIVE_API_KEYS)', () => {
  it('refuses a long secret of little entropy as an admin secret, naming the entry and not the secret', () => {
    expect(() => parseApiKeys('default:passwordpasswordpassword1234:admin')).toThrow(/^DRIVE_API_KEYS entry 1: the secret is too easy to guess/);
    expect(() => parseApiKeys('default:passwordpasswordpassword1234:admin')).not.toThrow(/password/);
  });

  it('refuses a keyboard row, naming the entry', () => {
    expect(() => parseApiKeys(`default:${seededBytes(7)(16).toString('hex')},default:qwertyuiopasdfghjklzxcvbnm12`)).toThrow(/^DRIVE_API_KEYS entry 2: the secret is too easy to guess/);
  });

  it('takes a random one', () => {
    const secret = seededBytes(7)(16).toString('hex');
    expect(parseApiKeys(`default:${secret}:admin`)).toEqual([{ drive: 'default', secret, role: 'admin' }]);
  });
});

/** Bytes from a seeded generator (mulberry32): the same sequence on every run. */
function seededBytes(seed: number): (count: number) => Buffer {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return (count) => Buffer.from(Array.from({ length: count }, () => Math.floor(next() * 256)));
}
