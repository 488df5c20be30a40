import { samplingRuleName } from '../../lib/drive-stack';

// X-Ray's rule names are at most 32 characters and unique in the account and region.
describe("the stack's X-Ray sampling rule name", () => {
  it('is the stack name and "-api" when that fits', () => {
    expect(samplingRuleName('Drive')).toBe('Drive-api');
    expect(samplingRuleName('a'.repeat(28))).toBe(`${'a'.repeat(28)}-api`);
  });

  it('tells apart long stack names that share their first 28 characters, within 32', () => {
    const one = samplingRuleName('DriveProductionEuWest1Stack-blue');
    const other = samplingRuleName('DriveProductionEuWest1Stack-green');
    expect(one).not.toBe(other);
    for (const name of [one, other]) expect(name.length).toBeLessThanOrEqual(32);
    expect(one.startsWith('DriveProductionEuWe')).toBe(true);
  });
});
