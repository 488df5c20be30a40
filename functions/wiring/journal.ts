import { DynamoUploadJournal } from '../aws/dynamo-upload-journal';
import { setting } from '../config';
import { dynamodb } from './dynamodb';
import './clean-up-report';

/** The upload journal, beside the upload sessions. */
export const journal = new DynamoUploadJournal(dynamodb, setting('uploadsTable'));
