/** Key attributes of the tables, shared by the adapters, the CDK stack and the local host. */
export const NODES_PARTITION_KEY = 'pk';
export const NODES_SORT_KEY = 'sk';
export const ACCESS_PARTITION_KEY = 'pk';
/** Epoch seconds after which DynamoDB's TTL may remove an item (rate-limit buckets). */
export const ACCESS_TTL_ATTRIBUTE = 'expiresAt';
export const UPLOADS_PARTITION_KEY = 'id';
/** Epoch seconds after which DynamoDB's TTL may remove an upload session. */
export const UPLOADS_TTL_ATTRIBUTE = 'expiresAt';
