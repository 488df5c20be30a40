import { logFileCpu } from './support/cpu-log';

// TEST_CPU_LOG=<file> notes each test file's CPU, its worker's and its hosts' (test/support/cpu-log.ts).
logFileCpu();
