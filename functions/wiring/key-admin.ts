import { DynamoKeyAdmin } from '../aws/api-key-admin';
import { setting } from '../config';
import { dynamodb } from './dynamodb';

/** The API keys of every drive, for the admin routes (each handler scopes itself to the caller's drive). */
export const keyAdmin = new DynamoKeyAdmin(dynamodb, setting('accessTable'));
