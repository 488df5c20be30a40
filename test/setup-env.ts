// The SDK warns on Node 20 about its future support window; the Lambda runtime is newer, and the
// warning would bury test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Every host a test starts checks each answer it sends against the OpenAPI document (lib/local/contract.ts);
// stopping it fails the test if one did not match. A test that sends deliberate garbage may pass '0'.
process.env.DRIVE_CHECK_CONTRACT ??= '1';
