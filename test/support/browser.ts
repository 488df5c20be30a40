import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

const ROOT = resolve(__dirname, '..', '..');

/**
 * Headless Chromium on a machine without network: with no sandbox (CI runs as root), and without the
 * background connections (QUIC, component updates, sync, first-run pings) it would otherwise wait on.
 */
const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The Chromium binary: `CHROMIUM_PATH`, the system's, or Debian's package installed by scripts/ensure-chromium.sh. */
export function chromiumPath(): string {
  try {
    // The install, when there is one, can take minutes on a fresh machine; its progress shows on stderr.
    return execFileSync('bash', [join(ROOT, 'scripts', 'ensure-chromium.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 10 * 60_000 }).trim();
  } catch (error) {
    throw new Error(`the browser tests need Chromium, and scripts/ensure-chromium.sh could not provide it (see its message above): ${String(error)}`);
  }
}

/** A headless Chromium; each launch gets a fresh profile (Playwright makes a temporary user-data-dir). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_FLAGS, timeout: 0 });
}
