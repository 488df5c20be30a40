import { releaseEarlierFilesContexts } from './support/async-context';

// The SDK warns on Node 20 about its future support window; the Lambda runtime is newer, and the
// warning would bury test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Every host a test starts checks each answer it sends against the OpenAPI document (lib/local/contract.ts);
// stopping it fails the test if one did not match. A test that sends deliberate garbage may pass '0'.
process.env.DRIVE_CHECK_CONTRACT ??= '1';
// Every host a test starts lets a slow invocation finish rather than answer API Gateway's 504 at 29 s: on a
// busy machine wall time says nothing of Lambda's, and a test must not depend on the machine's speed.
process.env.DRIVE_LOCAL_CUT_OFF ??= 'off';
// And finishes a recursive delete, a move, a copy, a restore or an emptying in its request however slow the
// machine: their request budgets (10 s by default) are wall time. A test of the jobs sets its budget to 0.
process.env.DRIVE_DELETE_BUDGET_MS ??= '600000';
process.env.DRIVE_MOVE_BUDGET_MS ??= '600000';
process.env.DRIVE_COPY_BUDGET_MS ??= '600000';
// Jest gives a test file a copy of the environment: a child spawned without `env` gets the worker's own,
// without these. Pass `env: process.env` to every child that runs a host.
// What the worker's earlier test files left enabled in the process (test/support/async-context.ts), disabled.
releaseEarlierFilesContexts();
