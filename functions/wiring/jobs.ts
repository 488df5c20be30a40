import { DynamoJobStore } from '../aws/dynamo-jobs';
import { setting } from '../config';
import { dynamodb } from './dynamodb';
import './clean-up-report';

/** Background jobs (deletes, moves, copies), beside the upload sessions. */
export const jobs = new DynamoJobStore(dynamodb, setting('uploadsTable'));
