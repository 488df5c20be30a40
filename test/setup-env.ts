// The SDK warns on Node 20 about its future support window; the Lambda runtime is newer, and the
// warning would bury test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
