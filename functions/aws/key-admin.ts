import { DynamoKeyAdmin } from './api-key-admin';
import { accessTable, dynamodb } from './dynamodb';

/** The API keys of every drive, for the admin routes (each handler scopes itself to the caller's drive). */
export const keyAdmin = new DynamoKeyAdmin(dynamodb, accessTable);
