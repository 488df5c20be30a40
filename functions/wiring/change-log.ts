import { DynamoChangeLog } from '../aws/dynamo-change-log';
import { setting } from '../config';
import { dynamodb } from './dynamodb';

/** The change feed's log (the `changes` table): what the sequencer appends to and the feed's routes read. */
export const changeLog = new DynamoChangeLog(dynamodb, setting('changesTable'), setting('changesRetentionDays') * 24 * 60 * 60);
