import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PINNED_CALLS, totalCalls } from '../support/aws-call-budget';
import { COST_ROWS, costLine, costTable } from '../support/cost-model';

const ROOT = join(__dirname, '..', '..');

describe("docs/deploy.md's cost per million requests (test/support/cost-model.ts)", () => {
  it('is what the pinned call counts give', () => {
    const text = readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8');
    const table = /<!-- cost table:[^>]*-->\n([\s\S]*?)\n<!-- end of cost table -->/.exec(text)?.[1];
    // On a change of the counts or prices, paste what this expects between the markers.
    expect(table).toBe(costTable());
  });

  it('prices requests the pinned table holds, one line a thing billed', () => {
    for (const row of COST_ROWS) {
      const line = costLine(row);
      expect(PINNED_CALLS).toContain(line.pin);
      const { total, ...items } = line.perMillion;
      expect(total).toBeCloseTo(Object.values(items).reduce((a, b) => a + b, 0), 10);
      // Every S3 call of the request is priced, or free by name (a delete, an abort).
      expect(line.s3PutClass + line.s3GetClass).toBe(totalCalls({ dynamodb: {}, s3: line.pin.s3, sqs: {} }));
    }
  });

  it('goes up by the price of a call when a request makes one more', () => {
    const upload = costLine(COST_ROWS[0]);
    const pin = upload.pin as { s3: Record<string, number> };
    const saved = pin.s3.PutObject;
    try {
      pin.s3.PutObject = saved + 1;
      expect(costLine(COST_ROWS[0]).perMillion.s3).toBeCloseTo(upload.perMillion.s3 + 5, 10);
    } finally {
      pin.s3.PutObject = saved;
    }
  });
});
