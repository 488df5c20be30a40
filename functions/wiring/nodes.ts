import { DynamoNodeStore } from '../aws/dynamo-node-store';
import { setting } from '../config';
import { dynamodb } from './dynamodb';
import './clean-up-report';

/** Files and folders. */
export const nodes = new DynamoNodeStore(dynamodb, setting('nodesTable'));
