import { hashSecret } from '../../../../functions/core/access';
import { trustedFor } from '../../../local-host';

// The host's own check of a request's key, before it reads the body, trusts a live key as long as the functions'
// guard would (DRIVE_KEY_CACHE_SECONDS): a warm host reads a key's record once per period, not once a request,
// and never trusts an unknown key or one past its expiry.

const SECRET = 'live-key-Wq3JrT2vLmXo8ZkB5nYc1aHd7sE';

function store(records: Map<string, { expiresAt?: string }>) {
  const reads: string[] = [];
  return {
    reads,
    find: async (hash: string) => {
      reads.push(hash);
      return records.get(hash);
    },
  };
}

describe('trustedFor', () => {
  it('reads a live key once within its period, and again once the period is over', async () => {
    // Prepare
    let now = 1_000_000;
    const keys = store(new Map([[hashSecret(SECRET), {}]]));
    const live = trustedFor(30_000, keys.find, () => now);

    // Act
    const answers = [await live(SECRET), await live(SECRET)];
    now += 29_999;
    answers.push(await live(SECRET));
    const readsWithin = keys.reads.length;
    now += 1;
    answers.push(await live(SECRET));

    // Assess: the record is read by its hash, never by the secret itself.
    expect(answers).toEqual([true, true, true, true]);
    expect(readsWithin).toBe(1);
    expect(keys.reads).toEqual([hashSecret(SECRET), hashSecret(SECRET)]);
  });

  it('reads every key every time with a period of 0 (the local default)', async () => {
    const keys = store(new Map([[hashSecret(SECRET), {}]]));
    const live = trustedFor(0, keys.find);

    await live(SECRET);
    await live(SECRET);

    expect(keys.reads).toHaveLength(2);
  });

  it('never trusts a key it did not find: each request with it is looked up again', async () => {
    const records = new Map<string, { expiresAt?: string }>();
    const keys = store(records);
    const live = trustedFor(30_000, keys.find, () => 0);

    const before = [await live(SECRET), await live(SECRET)];
    records.set(hashSecret(SECRET), {});
    const after = await live(SECRET);

    expect(before).toEqual([false, false]);
    expect(after).toBe(true);
    expect(keys.reads).toHaveLength(3);
  });

  it('trusts a minted key no longer than it lives', async () => {
    // Prepare: a key that expires 5 s from now, under a period of 30 s.
    let now = Date.parse('2026-11-27T06:00:00.000Z');
    const records = new Map([[hashSecret(SECRET), { expiresAt: '2026-11-27T06:00:05.000Z' }]]);
    const keys = store(records);
    const live = trustedFor(30_000, keys.find, () => now);

    // Act: trusted from its cache before its expiry; at its expiry the record is read again (and the store,
    // as DynamoKeyStore does, no longer finds an expired key).
    const first = await live(SECRET);
    now += 4_999;
    const cached = await live(SECRET);
    const readsBefore = keys.reads.length;
    now += 1;
    records.delete(hashSecret(SECRET));
    const expired = await live(SECRET);

    // Assess
    expect([first, cached, expired]).toEqual([true, true, false]);
    expect(readsBefore).toBe(1);
    expect(keys.reads).toHaveLength(2);
  });
});
