/**
 * A host's environment with the trash off (`DRIVE_TRASH_DAYS=0`, issue 28): deletes and replacements destroy
 * what they remove at once, as the spec has them. For the tests that pin that (bytes gone from the bucket,
 * nothing left in the nodes table); the trash itself is test/integration/trash.test.ts's.
 */
export const FINAL_DELETES = { DRIVE_TRASH_DAYS: '0' } as const;
