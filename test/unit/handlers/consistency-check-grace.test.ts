/** The scheduled check's handler refuses, when its module loads, a grace period too short for deleting repair. */
const BASE = { DRIVE_NODES_TABLE: 'nodes', DRIVE_UPLOADS_TABLE: 'uploads', DRIVE_BUCKET: 'bucket', AWS_REGION: 'eu-west-1' };

/** Loads the handler's module afresh with `env` beside the tables' names; what it threw, if anything. */
function load(env: Record<string, string | undefined>): unknown {
  const saved = { ...process.env };
  Object.assign(process.env, BASE);
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  try {
    jest.isolateModules(() => {
      require('../../../functions/consistency-check');
    });
    return undefined;
  } catch (error) {
    return error;
  } finally {
    process.env = saved;
  }
}

describe('Function: the consistency check handler, its grace period', () => {
  it('refuses a grace period under 15 minutes while repair deletes, outside the local host', () => {
    // Act
    const orphans = load({ DRIVE_FSCK_GRACE_MINUTES: '14', DRIVE_FSCK_REPAIR: undefined, DRIVE_DYNAMODB_ENDPOINT: undefined });
    const all = load({ DRIVE_FSCK_GRACE_MINUTES: '0', DRIVE_FSCK_REPAIR: 'true', DRIVE_DYNAMODB_ENDPOINT: undefined });

    // Assess
    expect((orphans as Error).message).toBe('DRIVE_FSCK_GRACE_MINUTES must be at least 15 while DRIVE_FSCK_REPAIR deletes orphans (got 14)');
    expect((all as Error).message).toBe('DRIVE_FSCK_GRACE_MINUTES must be at least 15 while DRIVE_FSCK_REPAIR deletes orphans (got 0)');
  });

  it('takes 15 minutes, any grace period when it only reports, and 0 on the local host (its emulators set)', () => {
    // Act and assess
    expect(load({ DRIVE_FSCK_GRACE_MINUTES: '15', DRIVE_FSCK_REPAIR: undefined, DRIVE_DYNAMODB_ENDPOINT: undefined })).toBeUndefined();
    expect(load({ DRIVE_FSCK_GRACE_MINUTES: '0', DRIVE_FSCK_REPAIR: 'off', DRIVE_DYNAMODB_ENDPOINT: undefined })).toBeUndefined();
    expect(load({ DRIVE_FSCK_GRACE_MINUTES: '0', DRIVE_FSCK_REPAIR: undefined, DRIVE_DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' })).toBeUndefined();
  });
});
