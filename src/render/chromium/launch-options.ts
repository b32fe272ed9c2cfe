// How docgen starts Chromium: which binary, which flags, and why.
//
// No network, by construction rather than by hope. Request interception (page-guard.ts) sees
// page loads, but not everything Chromium can do on its own or through paths interception does
// not cover (WebSockets, preconnect, DNS prefetch, Chromium's background services). Two more
// walls, each of which holds on its own (test/integration/render-hostile.test.ts launches
// Chromium with each alone, JavaScript on, and no interception):
// - `--host-resolver-rules=MAP * ~NOTFOUND`: every host resolution fails. In current Chromium
//   this covers IP literals too (http://127.0.0.1 fails with ERR_NAME_NOT_RESOLVED), and DNS
//   prefetch never leaves the machine;
// - every URL goes through a proxy that is our own tripwire listener on loopback, which closes
//   each connection at once (and counts it). `<-loopback>` removes Chromium's implicit proxy
//   bypass for localhost/127.0.0.1/[::1], so loopback URLs get no special treatment. Should a
//   Chromium build or code path ever connect to an IP literal without the resolver, it still
//   only reaches the tripwire. (With both walls up, the resolver rules also stop Chromium from
//   reaching the proxy itself, so the tripwire count stays 0.)
// - QUIC is off (UDP would not go through an HTTP proxy) and WebRTC may only use the proxy;
// - background services (component updates, sync, safe browsing, metrics) are off.

import { accessSync, constants, readFileSync, statfsSync } from 'node:fs';
import { basename, join } from 'node:path';

/** Debian's /usr/bin/chromium and /usr/bin/chromium-headless-shell are shell wrappers (the first
 * sources /etc/chromium.d, which enables remote extensions and adds flags we do not want); the
 * real binaries sit in /usr/lib/chromium under the same names. */
const DEBIAN_BINARY_DIR = '/usr/lib/chromium';

export function resolveChromiumExecutable(configured: string): string {
  let head = '';
  try {
    head = readFileSync(configured, { encoding: 'latin1', flag: 'r' }).slice(0, 2);
  } catch {
    // not readable: launching says so
  }
  const real = join(DEBIAN_BINARY_DIR, basename(configured));
  return head === '#!' && isExecutable(real) ? real : configured;
}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Chromium puts shared memory in /dev/shm; containers often give it only 64 MB, which makes
 * Chromium crash under load. Use it only when it is roomy, else fall back to /tmp. */
export function devShmIsRoomy(minFreeBytes = 512 * 1024 * 1024): boolean {
  try {
    const stats = statfsSync('/dev/shm');
    return stats.bavail * stats.bsize >= minFreeBytes;
  } catch {
    return false;
  }
}

export interface ChromiumFlagsInput {
  /** Loopback port of the tripwire proxy. */
  proxyPort: number;
  useDevShm: boolean;
  /** Chromium refuses to run as root with its sandbox. */
  noSandbox: boolean;
}

export function chromiumFlags(input: ChromiumFlagsInput): string[] {
  return [
    ...(input.noSandbox ? ['--no-sandbox'] : []),
    // Network: see the top of this file.
    `--proxy-server=http://127.0.0.1:${input.proxyPort}`,
    '--proxy-bypass-list=<-loopback>',
    '--host-resolver-rules=MAP * ~NOTFOUND',
    '--disable-quic',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    '--no-pings',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-default-apps',
    '--disable-extensions',
    '--disable-breakpad',
    // Scripts off in every frame Blink creates, including iframes of other origins that run in
    // other renderer processes (per-page settings are applied too, see page-guard.ts).
    '--blink-settings=scriptEnabled=false',
    // Printing needs no GPU: the GPU process stays (for compositing) but runs with GL disabled,
    // without loading SwiftShader: less memory and a faster start.
    '--disable-gpu',
    '--disable-software-rasterizer',
    '--mute-audio',
    '--hide-scrollbars',
    '--font-render-hinting=none',
    // Several pages render at once in one headless window: none may be throttled as hidden.
    '--disable-renderer-backgrounding',
    '--disable-background-timer-throttling',
    '--disable-backgrounding-occluded-windows',
  ];
}

/** puppeteer defaults we drop: the /dev/shm choice is ours (devShmIsRoomy). */
export function ignoredDefaultArgs(useDevShm: boolean): string[] {
  return useDevShm ? ['--disable-dev-shm-usage'] : [];
}
