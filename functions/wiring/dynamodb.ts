import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QUIET_SDK_LOGGER } from '../aws/sdk-logger';
import { setting } from '../config';
import { countAwsCalls } from '../telemetry/aws-call-counter';

const endpoint = setting('dynamodbEndpoint');

/**
 * The DynamoDB client of this container; `DRIVE_DYNAMODB_ENDPOINT` points it at the local emulator. The
 * middleware stack is resolved once per command type rather than on every call (nothing changes it after start).
 */
export const dynamodb = countAwsCalls(new DynamoDBClient({ cacheMiddleware: true, logger: QUIET_SDK_LOGGER, ...(endpoint ? { endpoint } : {}) }), 'dynamodb');
