/** Key attributes of the tables, shared by the adapters, the CDK stack and the local host. */
export const NODES_PARTITION_KEY = 'pk';
export const NODES_SORT_KEY = 'sk';
export const ACCESS_PARTITION_KEY = 'pk';
/**
 * The access table's index of API keys by drive, oldest first: only key items carry both attributes (a
 * drive's admin roster has no `createdAt`, rate-limit buckets no `drive`), so it holds nothing else.
 */
export const KEYS_BY_DRIVE_INDEX = { name: 'keysByDrive', partitionKey: 'drive', sortKey: 'createdAt' } as const;
/**
 * The access table's index of share links by drive, in path order. Link items name their drive `linkDrive`,
 * never `drive`, so they stay out of `keysByDrive`; key items have no `linkDrive`, so they stay out of this one.
 */
export const LINKS_BY_DRIVE_INDEX = { name: 'linksByDrive', partitionKey: 'linkDrive', sortKey: 'linkPath' } as const;
/** Epoch seconds after which DynamoDB's TTL may remove an item (rate-limit buckets, share links). */
export const ACCESS_TTL_ATTRIBUTE = 'expiresAt';
export const UPLOADS_PARTITION_KEY = 'id';
/** Epoch seconds after which DynamoDB's TTL may remove an upload session. */
export const UPLOADS_TTL_ATTRIBUTE = 'expiresAt';
/** The change log (docs/change-feed-design.md): a drive's changes, its sequencer's state, move marks. */
export const CHANGES_PARTITION_KEY = 'pk';
export const CHANGES_SORT_KEY = 'sk';
/** Epoch seconds after which DynamoDB's TTL may remove a change or a move mark. */
export const CHANGES_TTL_ATTRIBUTE = 'expiresAt';
