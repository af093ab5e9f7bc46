/**
 * Debian's Chromium (`/usr/bin/chromium`, installed by .ci/run) driven by playwright-core, with
 * the flags this machine needs: no sandbox as root, and none of Chromium's own background
 * connections (the network is closed; they would fail at every start). Shared by the console
 * bench and the browser tests.
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
