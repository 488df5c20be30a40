import { DynamoFileRecords } from '../aws/dynamo-file-records';
import { setting } from '../config';
import { dynamodb } from './dynamodb';
import './clean-up-report';

/** Moves and removals of file records with the journal, as single transactions (nodes and upload tables; a move's mark in the changes table). */
export const records = new DynamoFileRecords(dynamodb, setting('nodesTable'), setting('uploadsTable'), setting('changesTable'));
