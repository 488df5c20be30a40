import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { streamRecordOf } from './aws/stream-records';
import { setting } from './config';
import type { StreamRecord } from './core/changes/change-log';
import { sequenceBatch } from './core/changes/sequencer';
import { changeLog } from './wiring/change-log';
import { describeError, log } from './telemetry/log';
import { withRequestContext } from './telemetry/request-context';

const pairWaitMs = setting('changesPairWaitSeconds') * 1000;

/**
 * Fed by the nodes table's stream (a batch of one shard's records, in order; the local host's tap feeds it
 * the same way): appends each drive's changes to its log (docs/change-feed-design.md, "Sequencing"). A record
 * waiting for its move's other half is handed back, with all after it (`batchItemFailures`); a failure throws,
 * and the batch is handed again until its records expire.
 */
export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const first = event.Records[0];
  const records = event.Records.map((record) => streamRecordOf(record)).filter((record): record is StreamRecord => record !== undefined);
  return withRequestContext(first?.eventID ?? 'empty', async (context) => {
    try {
      const retryFrom = await sequenceBatch(changeLog, records, {
        pairWaitMs,
        now: () => Date.now(),
        onUnpaired: (half) => log('WARN', 'a move half was shown alone: its pair did not come in time', { kind: half.kind, side: half.side, from: half.from, to: half.to }),
      });
      log('INFO', 'sequenced stream records', { records: records.length, handed_back_from: retryFrom, aws_calls: context.awsCalls });
      return { batchItemFailures: retryFrom === undefined ? [] : [{ itemIdentifier: retryFrom }] };
    } catch (error) {
      log('ERROR', 'sequencing failed', { records: records.length, error: describeError(error), aws_calls: context.awsCalls });
      throw error;
    }
  });
};
