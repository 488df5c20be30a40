import { DynamoFileRecords } from '../aws/dynamo-file-records';
import { DynamoUploadJournal } from '../aws/dynamo-upload-journal';
import { setting } from '../config';
import { dynamodb } from './dynamodb';
import './clean-up-report';

/** The upload journal, beside the upload sessions. */
export const journal = new DynamoUploadJournal(dynamodb, setting('uploadsTable'));

/** Moves and removals of file records with the journal, as single transactions. */
export const records = new DynamoFileRecords(dynamodb, setting('nodesTable'), setting('uploadsTable'));
