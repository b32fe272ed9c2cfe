// The one typed view of docgen's configuration: DOCGEN_* environment variables, validated
// at start. A bad value stops the process with a message naming the variable and the fix.
// The README's configuration table lists exactly these variables (test/unit/config.test.ts
// checks). `docgen dev` and `docgen admin` read a few more of their own (see the README).

import { resolveChromiumFontconfig } from '../render/fonts/chromium-fontconfig.ts';
import { DEFAULT_BATCH_CREATION_GRACE_MS, DEFAULT_MAX_BATCH_ITEMS, DEFAULT_MAX_HTML_BYTES } from './limits.ts';

export type Role = 'api' | 'render' | 'webhooks';
export const ALL_ROLES: readonly Role[] = ['api', 'render', 'webhooks'];

export interface ListenAddress {
  host: string;
  port: number;
}

export interface Config {
  roles: Role[];
  publicAddress: ListenAddress;
  adminAddress: ListenAddress;
  opsAddress: ListenAddress;
  adminToken: string;
  portal: {
    /** DOCGEN_PORTAL_BASE_URL without a trailing slash; null: the admin listener's own address. */
    baseUrl: string | null;
    /** Proxies in front of the admin listener whose X-Forwarded-For entries are trusted. */
    trustedProxyHops: number;
  };
  /** 32-byte key: encrypts webhook secrets, signs page tokens. */
  secretKey: Buffer;
  mongodb: {
    url: string;
    database: string;
    /** Optional in hand-built configs (default 30 s). */
    serverSelectionTimeoutMs?: number;
    /** Optional in hand-built configs (default 30 s). */
    operationTimeoutMs?: number;
  };
  nats: { servers: string[]; streamPrefix: string };
  s3: {
    endpoint: URL;
    publicEndpoint: URL;
    accessKey: string;
    secretKey: string;
    bucket: string;
    region: string;
  };
  render: {
    chromiumPath: string;
    /** Chromium without its sandbox (DOCGEN_CHROMIUM_NO_SANDBOX): the operator's explicit choice.
     * Optional in hand-built configs (default: sandboxed). */
    noSandbox?: boolean;
    /** Fontconfig file Chromium reads (DOCGEN_CHROMIUM_FONTCONFIG resolved); null: the system's.
     * Optional in hand-built configs (default: the system's). */
    fontconfigFile?: string | null;
    concurrency: number;
    timeoutMs: number;
    liquidTimeoutMs: number;
    liquidMemoryMb: number;
    browserRecycleAfterRenders: number;
    browserMaxRssMb: number;
    maxAttempts: number;
    /** Bound of a document's load (optional in hand-built configs; default 5 s). */
    loadTimeoutMs?: number;
    /** Largest printed HTML document (optional in hand-built configs; default DEFAULT_MAX_HTML_BYTES). */
    maxHtmlBytes?: number;
    /** RFC 3161 timestamp authority: signatures become PAdES B-T (optional; null: B-B). */
    timestampUrl?: string | null;
  };
  /** Connection hygiene of every listener (public, admin, ops). */
  http: {
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxConnections: number;
  };
  /** Template previews (the portal's live preview), answered by render processes. */
  previews: { concurrency: number };
  api: {
    rateLimitPerSecond: number;
    rateLimitBurst: number;
    maxBodyBytes: number;
    apiKeyCacheMs: number;
    /** Active API keys a workspace may hold before only the operator can add more (optional in
     * hand-built configs; default DOCGEN_API_KEYS_PER_WORKSPACE's). */
    maxKeysPerWorkspace?: number;
    /** Lifetime of a generation's presigned outputUrl, from the read that minted it. */
    outputUrlTtlSeconds: number;
    /** Most items in one batch (optional in hand-built configs; default DEFAULT_MAX_BATCH_ITEMS). */
    batchMaxItems?: number;
    /** How old a batch create cut off by a crash must be before the render role's sweeper finishes
     * it (optional in hand-built configs; default BATCH_CREATION_GRACE_MS). */
    batchCreationGraceMs?: number;
  };
  assets: {
    maxBytes: number;
    workspaceQuotaBytes: number;
  };
  webhooks: {
    allowInsecureUrls: boolean;
    /** Ports webhook URLs may use besides 443 and 80 (optional in hand-built configs; default none). */
    allowedPorts?: number[];
    timeoutMs: number;
    concurrency: number;
    endpointConcurrency: number;
  };
  retention: {
    /** How often each render process looks for generations past their workspace's retention. */
    sweepIntervalMs: number;
    /** How long a test generation is kept (docs/interface.md#test-mode), in seconds. */
    testGenerationSeconds: number;
  };
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  shutdownGraceMs: number;
}

export interface ConfigVariable {
  name: string;
  default: string | undefined;
  description: string;
}

/** Every variable docgen reads, with its default: the source of the README's table. */
export const CONFIG_VARIABLES: ConfigVariable[] = [
  {
    name: 'DOCGEN_ROLES',
    default: 'api,render,webhooks',
    description: 'Roles this process runs (`docgen serve --role` sets it).',
  },
  {
    name: 'DOCGEN_PUBLIC_ADDR',
    default: '0.0.0.0:8080',
    description: 'Public listener: REST `/v1` and Connect/gRPC `docgen.v1`.',
  },
  {
    name: 'DOCGEN_ADMIN_ADDR',
    default: '0.0.0.0:8081',
    description: 'Admin listener: Connect/gRPC `docgen.admin.v1`. Never expose publicly.',
  },
  {
    name: 'DOCGEN_OPS_ADDR',
    default: '0.0.0.0:9090',
    description: 'Health (`/healthz`, `/readyz`) and `/metrics`, for every role.',
  },
  {
    name: 'DOCGEN_ADMIN_TOKEN',
    default: undefined,
    description:
      'Operator token for the admin API (at least 12 characters; use 32+ random ones). Required by the api role.',
  },
  {
    name: 'DOCGEN_PORTAL_BASE_URL',
    default: undefined,
    description:
      "Address people open the portal at (the admin listener), e.g. `https://docgen-admin.internal`; builds invitation links, and `http://` turns off Secure cookies. Default: the admin listener's address.",
  },
  {
    name: 'DOCGEN_PORTAL_TRUSTED_PROXY_HOPS',
    default: '0',
    description:
      'Proxies (e.g. the internal ingress) in front of the admin listener: sign-in limits take the client address from `X-Forwarded-For` that many hops from the right. 0: the TCP peer.',
  },
  {
    name: 'DOCGEN_SECRET_KEY',
    default: undefined,
    description: '32 bytes as 64 hex characters or base64: encrypts webhook secrets and signs page tokens. Required.',
  },
  { name: 'DOCGEN_MONGODB_URL', default: undefined, description: 'MongoDB connection string (MongoDB 7+). Required.' },
  { name: 'DOCGEN_MONGODB_DATABASE', default: 'docgen', description: 'Database name.' },
  {
    name: 'DOCGEN_MONGODB_SERVER_SELECTION_TIMEOUT_MS',
    default: '30000',
    description:
      'Longest an operation waits for a writable MongoDB server, e.g. during an election (typically up to 12 s); past it the request gets 503 UNAVAILABLE.',
  },
  {
    name: 'DOCGEN_MONGODB_OPERATION_TIMEOUT_MS',
    default: '30000',
    description:
      'Longest one MongoDB round trip may take before its connection counts as dead (the operation is then retried once on the new primary).',
  },
  {
    name: 'DOCGEN_NATS_URL',
    default: undefined,
    description: 'NATS server URL(s), comma-separated; JetStream must be enabled. Required.',
  },
  {
    name: 'DOCGEN_NATS_STREAM_PREFIX',
    default: 'DOCGEN',
    description: 'Prefix of JetStream stream and subject names (lets several installs share one NATS).',
  },
  {
    name: 'DOCGEN_S3_ENDPOINT',
    default: undefined,
    description: 'S3/MinIO endpoint URL used by docgen, e.g. `http://minio:9000`. Required.',
  },
  {
    name: 'DOCGEN_S3_PUBLIC_ENDPOINT',
    default: undefined,
    description: 'Endpoint URL that clients download `outputUrl` from. Optional: defaults to DOCGEN_S3_ENDPOINT.',
  },
  { name: 'DOCGEN_S3_ACCESS_KEY', default: undefined, description: 'S3 access key. Required.' },
  { name: 'DOCGEN_S3_SECRET_KEY', default: undefined, description: 'S3 secret key. Required.' },
  { name: 'DOCGEN_S3_BUCKET', default: 'docgen', description: 'Bucket for generated documents (created if missing).' },
  { name: 'DOCGEN_S3_REGION', default: 'us-east-1', description: 'S3 region used for signing.' },
  {
    name: 'DOCGEN_CHROMIUM_PATH',
    default: '/usr/bin/chromium-headless-shell',
    description:
      "Chromium executable. The default is Debian's `chromium-headless-shell`, which prints about twice as fast as the full browser (`/usr/bin/chromium`, which also works).",
  },
  {
    name: 'DOCGEN_CHROMIUM_NO_SANDBOX',
    default: 'false',
    description:
      '`true` runs Chromium without its sandbox (logged as a warning at start, shown in `/readyz`). Only for machines that cannot sandbox (docgen as root, or no user namespaces); without it such a machine refuses to start, naming this setting. Kubernetes can keep the sandbox: docs/deploy.md#security. `docgen dev` run as root defaults it to `true`.',
  },
  {
    name: 'DOCGEN_CHROMIUM_FONTCONFIG',
    default: 'auto',
    description:
      "Fonts Chromium prints with. `auto`: the CJK everyday subsets that `docgen fonts build` made in build/fonts/ (setup and the image make them; CJK text prints faster (a fifth in the headless shell, two to three times in the full browser), looking the same), else the system's fonts; `system`: the system's fonts only; or the absolute path of a fontconfig file.",
  },
  {
    name: 'DOCGEN_RENDER_CONCURRENCY',
    default: '4',
    description: 'Pages rendering at once per render process (also the number of jobs pulled).',
  },
  { name: 'DOCGEN_RENDER_TIMEOUT_MS', default: '10000', description: 'Hard time-out of one render (Liquid and PDF).' },
  {
    name: 'DOCGEN_LIQUID_TIMEOUT_MS',
    default: '2000',
    description: 'Hard time-out of the Liquid step; its worker process is killed and replaced past it.',
  },
  { name: 'DOCGEN_LIQUID_MEMORY_MB', default: '64', description: 'Heap limit of a Liquid worker process.' },
  { name: 'DOCGEN_BROWSER_RECYCLE_RENDERS', default: '1000', description: 'Restart Chromium after this many renders.' },
  {
    name: 'DOCGEN_BROWSER_MAX_RSS_MB',
    default: '1500',
    description: 'Restart Chromium when its processes use more memory than this.',
  },
  {
    name: 'DOCGEN_RENDER_LOAD_TIMEOUT_MS',
    default: '5000',
    description:
      'Time a document (and its header/footer) has to finish loading in Chromium; past it the render fails permanently (it waits for something that never arrives).',
  },
  {
    name: 'DOCGEN_RENDER_MAX_HTML_BYTES',
    default: String(DEFAULT_MAX_HTML_BYTES),
    description: 'Largest HTML document Chromium is asked to print; a bigger one fails permanently at once.',
  },
  {
    name: 'DOCGEN_TIMESTAMP_URL',
    default: undefined,
    description:
      'RFC 3161 timestamp authority (http or https) for signed templates: signatures become PAdES B-T. Default: none (B-B).',
  },
  {
    name: 'DOCGEN_HTTP_HEADERS_TIMEOUT_MS',
    default: '10000',
    description:
      "Every listener: time a client has to send a request's headers (a silent connection is closed after it).",
  },
  {
    name: 'DOCGEN_HTTP_REQUEST_TIMEOUT_MS',
    default: '30000',
    description: 'Every listener: time a client has to send a whole request, body included.',
  },
  {
    name: 'DOCGEN_HTTP_KEEP_ALIVE_TIMEOUT_MS',
    default: '65000',
    description: 'Every listener: how long an idle keep-alive connection stays open.',
  },
  {
    name: 'DOCGEN_HTTP_MAX_CONNECTIONS',
    default: '1000',
    description: 'Every listener: open connections accepted at once; more are refused until some close.',
  },
  {
    name: 'DOCGEN_RENDER_MAX_ATTEMPTS',
    default: '3',
    description: 'Attempts in all for transient render failures before FAILED.',
  },
  {
    name: 'DOCGEN_PREVIEW_CONCURRENCY',
    default: '2',
    description:
      'Template previews rendering at once per render process, on pages of their own (production renders keep theirs).',
  },
  {
    name: 'DOCGEN_RATE_LIMIT_PER_SECOND',
    default: '20',
    description: 'Default sustained requests/s per API key (keys may override).',
  },
  { name: 'DOCGEN_RATE_LIMIT_BURST', default: '40', description: 'Default burst per API key.' },
  {
    name: 'DOCGEN_API_KEYS_PER_WORKSPACE',
    default: '50',
    description:
      'Active (unrevoked) API keys a workspace may hold. Past it, and for a key rate or burst above the defaults, only the operator token can create keys.',
  },
  { name: 'DOCGEN_MAX_BODY_BYTES', default: '1048576', description: 'Largest accepted request body.' },
  {
    name: 'DOCGEN_API_KEY_CACHE_MS',
    default: '500',
    description: 'How long an API key lookup is cached (a revoke takes effect within this).',
  },
  {
    name: 'DOCGEN_OUTPUT_URL_TTL_SECONDS',
    default: '3600',
    description:
      "Lifetime of a generation's `outputUrl`, from the read that minted it (1 to 604800, S3's limit). Lower it to make leaked links expire sooner; clients fetch a fresh one by reading the generation again.",
  },
  {
    name: 'DOCGEN_BATCH_MAX_ITEMS',
    default: String(DEFAULT_MAX_BATCH_ITEMS),
    description:
      'Most items in one batch (`POST /v1/batches`, 1 to 10000). The whole batch must also fit in DOCGEN_MAX_BODY_BYTES.',
  },
  {
    name: 'DOCGEN_BATCH_CREATION_GRACE_MS',
    default: String(DEFAULT_BATCH_CREATION_GRACE_MS),
    description:
      "How long a batch whose create was cut off (its API process died before storing every item) waits before a render process finishes it from the kept request (5000 to 3600000). Longer than any create's own time.",
  },
  {
    name: 'DOCGEN_ASSET_MAX_BYTES',
    default: '10485760',
    description: 'Largest workspace asset (image or font) accepted by upload.',
  },
  {
    name: 'DOCGEN_ASSET_WORKSPACE_QUOTA_BYTES',
    default: '268435456',
    description: 'Total size of the assets one workspace may store.',
  },
  {
    name: 'DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS',
    default: 'false',
    description: 'Allow `http://` and private/loopback webhook addresses (local development only).',
  },
  {
    name: 'DOCGEN_WEBHOOK_ALLOWED_PORTS',
    default: undefined,
    description:
      'Ports webhook URLs may use besides 443 and 80, comma-separated (e.g. `8443`). Others are refused at creation and at delivery (`DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS` lifts the rule).',
  },
  { name: 'DOCGEN_WEBHOOK_TIMEOUT_MS', default: '10000', description: 'Time a receiver has to answer an attempt.' },
  { name: 'DOCGEN_WEBHOOK_CONCURRENCY', default: '256', description: 'Attempts in flight per webhooks process.' },
  {
    name: 'DOCGEN_WEBHOOK_ENDPOINT_CONCURRENCY',
    default: '64',
    description: 'Attempts in flight to any one endpoint per webhooks process.',
  },
  {
    name: 'DOCGEN_RETENTION_SWEEP_INTERVAL_MS',
    default: '30000',
    description:
      "How often each render process deletes generations past their workspace's retention (`docgen admin workspace update WS --retention 30d`).",
  },
  {
    name: 'DOCGEN_TEST_GENERATION_RETENTION_SECONDS',
    default: '86400',
    description:
      'How long test generations (made with `svc_test_` keys) are kept before the retention sweep erases them, whatever the workspace retention (60 to 2592000).',
  },
  { name: 'DOCGEN_LOG_LEVEL', default: 'info', description: '`debug`, `info`, `warn` or `error`.' },
  {
    name: 'DOCGEN_SHUTDOWN_GRACE_MS',
    default: '25000',
    description: 'On SIGTERM: time to finish in-flight work before handing it back and exiting.',
  },
];

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`docgen cannot start, its configuration is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The default of a variable docgen reads (undefined: none, it is required or optional). */
export function configDefault(name: string): string | undefined {
  const variable = CONFIG_VARIABLES.find((v) => v.name === name);
  if (!variable) throw new Error(`docgen reads no variable ${name}`);
  return variable.default;
}

type Env = Record<string, string | undefined>;

class Reader {
  readonly problems: string[] = [];
  private readonly env: Env;
  constructor(env: Env) {
    this.env = env;
  }

  raw(name: string): string | undefined {
    const value = this.env[name];
    if (value !== undefined && value.trim() !== '') return value.trim();
    return configDefault(name);
  }

  string(name: string, fix: string, required: boolean): string {
    const value = this.raw(name);
    if (value === undefined) {
      if (required) this.problems.push(`${name} is not set. ${fix}`);
      return '';
    }
    return value;
  }

  integer(name: string, min: number, max: number): number {
    const value = this.raw(name) ?? '';
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || n < min || n > max) {
      this.problems.push(
        `${name}=${JSON.stringify(value)} is not valid. Set it to a whole number from ${min} to ${max}.`,
      );
      return min;
    }
    return n;
  }

  number(name: string, min: number, max: number): number {
    const value = this.raw(name) ?? '';
    const n = Number(value);
    if (value === '' || !Number.isFinite(n) || n < min || n > max) {
      this.problems.push(`${name}=${JSON.stringify(value)} is not valid. Set it to a number from ${min} to ${max}.`);
      return min;
    }
    return n;
  }

  boolean(name: string): boolean {
    const value = (this.raw(name) ?? '').toLowerCase();
    if (['true', '1', 'yes'].includes(value)) return true;
    if (['false', '0', 'no'].includes(value)) return false;
    this.problems.push(`${name}=${JSON.stringify(value)} is not valid. Set it to true or false.`);
    return false;
  }

  /** A comma-separated list of TCP ports (empty: none). */
  ports(name: string): number[] {
    const value = this.raw(name) ?? '';
    const entries = value
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const ports = entries.map(Number);
    if (entries.some((p, i) => !/^\d{1,5}$/.test(p) || ports[i]! < 1 || ports[i]! > 65535)) {
      this.problems.push(
        `${name}=${JSON.stringify(value)} is not valid. Set it to comma-separated ports from 1 to 65535, e.g. 8443,9443.`,
      );
      return [];
    }
    return [...new Set(ports)];
  }

  address(name: string): ListenAddress {
    const value = this.raw(name) ?? '';
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(value);
    const port = match ? Number(match[2]) : NaN;
    if (!match || port > 65535) {
      this.problems.push(
        `${name}=${JSON.stringify(value)} is not valid. Set it to HOST:PORT, e.g. 0.0.0.0:8080 (port 0 picks a free one).`,
      );
      return { host: '127.0.0.1', port: 0 };
    }
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  }

  url(name: string, protocols: string[], required: boolean, fix: string): URL | undefined {
    const value = this.raw(name);
    if (value === undefined) {
      if (required) this.problems.push(`${name} is not set. ${fix}`);
      return undefined;
    }
    try {
      const url = new URL(value);
      if (!protocols.includes(url.protocol)) throw new Error('protocol');
      return url;
    } catch {
      this.problems.push(`${name}=${JSON.stringify(value)} is not a valid ${protocols.join(' or ')} URL. ${fix}`);
      return undefined;
    }
  }
}

function parseRoles(value: string, problems: string[]): Role[] {
  const roles = value
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const bad = roles.filter((r) => !(ALL_ROLES as string[]).includes(r));
  if (bad.length > 0 || roles.length === 0) {
    problems.push(
      `DOCGEN_ROLES=${JSON.stringify(value)} is not valid. Use a comma-separated subset of ${ALL_ROLES.join(', ')}.`,
    );
    return [];
  }
  return [...new Set(roles)] as Role[];
}

export function parseSecretKey(value: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const buf = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (buf.length === 32) return buf;
  }
  return undefined;
}

/** Reads and validates the configuration; throws ConfigError listing every problem at once. */
export function loadConfig(env: Env = process.env): Config {
  const r = new Reader(env);
  const roles = parseRoles(r.raw('DOCGEN_ROLES') ?? '', r.problems);

  const adminToken = r.string(
    'DOCGEN_ADMIN_TOKEN',
    'Set it to a long random string, e.g. `openssl rand -hex 32`.',
    roles.includes('api'),
  );
  if (adminToken !== '' && adminToken.length < 12) {
    r.problems.push(
      'DOCGEN_ADMIN_TOKEN is shorter than 12 characters. Use a long random string, e.g. `openssl rand -hex 32`.',
    );
  }

  const portalBaseUrl = r.url(
    'DOCGEN_PORTAL_BASE_URL',
    ['http:', 'https:'],
    false,
    'Set it to the address people open the portal at, e.g. https://docgen-admin.internal.',
  );
  if (portalBaseUrl && (portalBaseUrl.search || portalBaseUrl.hash || portalBaseUrl.username)) {
    r.problems.push('DOCGEN_PORTAL_BASE_URL must be a plain http(s) address without query, fragment or credentials.');
  }

  const secretKeyText = r.string('DOCGEN_SECRET_KEY', 'Generate one with `openssl rand -hex 32`.', true);
  let secretKey: Buffer = Buffer.alloc(0);
  if (secretKeyText !== '') {
    const parsed = parseSecretKey(secretKeyText);
    if (parsed) secretKey = parsed;
    else
      r.problems.push(
        'DOCGEN_SECRET_KEY must be 32 bytes: 64 hex characters or 44 base64 characters. Generate one with `openssl rand -hex 32`.',
      );
  }

  const mongoUrl = r.string(
    'DOCGEN_MONGODB_URL',
    'Set it to a connection string, e.g. mongodb://mongo:27017/?replicaSet=rs0.',
    true,
  );
  if (mongoUrl !== '' && !/^mongodb(\+srv)?:\/\//.test(mongoUrl)) {
    r.problems.push(`DOCGEN_MONGODB_URL must start with mongodb:// or mongodb+srv://.`);
  }

  const natsText = r.string(
    'DOCGEN_NATS_URL',
    'Set it to the NATS server, e.g. nats://nats:4222 (JetStream enabled).',
    true,
  );
  const natsServers = natsText
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const server of natsServers) {
    if (!/^(nats|tls):\/\/[^\s/]+$/.test(server) && !/^[^\s/:]+:\d+$/.test(server)) {
      r.problems.push(`DOCGEN_NATS_URL entry ${JSON.stringify(server)} is not valid. Use nats://HOST:PORT.`);
    }
  }
  const streamPrefix = r.string('DOCGEN_NATS_STREAM_PREFIX', '', false);
  if (!/^[A-Z][A-Z0-9_]{0,31}$/.test(streamPrefix)) {
    r.problems.push('DOCGEN_NATS_STREAM_PREFIX must be 1-32 characters of A-Z, 0-9 and _, starting with a letter.');
  }

  const s3Fix = 'Set it to your MinIO/S3 endpoint, e.g. http://minio:9000.';
  const s3Endpoint = r.url('DOCGEN_S3_ENDPOINT', ['http:', 'https:'], true, s3Fix);
  const s3Public = r.url(
    'DOCGEN_S3_PUBLIC_ENDPOINT',
    ['http:', 'https:'],
    false,
    'Set it to the URL clients reach the object store at.',
  );
  const s3AccessKey = r.string('DOCGEN_S3_ACCESS_KEY', 'Set it to the S3 access key.', true);
  const s3SecretKey = r.string('DOCGEN_S3_SECRET_KEY', 'Set it to the S3 secret key.', true);
  const bucket = r.string('DOCGEN_S3_BUCKET', '', false);
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    r.problems.push(
      `DOCGEN_S3_BUCKET=${JSON.stringify(bucket)} is not a valid bucket name (3-63 of a-z, 0-9, '.', '-').`,
    );
  }

  const logLevel = r.string('DOCGEN_LOG_LEVEL', '', false);
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    r.problems.push(`DOCGEN_LOG_LEVEL=${JSON.stringify(logLevel)} is not valid. Use debug, info, warn or error.`);
  }

  const chromiumFontconfig = resolveChromiumFontconfig(r.string('DOCGEN_CHROMIUM_FONTCONFIG', '', false));
  if (!chromiumFontconfig.ok) r.problems.push(chromiumFontconfig.problem);

  const config: Config = {
    roles,
    publicAddress: r.address('DOCGEN_PUBLIC_ADDR'),
    adminAddress: r.address('DOCGEN_ADMIN_ADDR'),
    opsAddress: r.address('DOCGEN_OPS_ADDR'),
    adminToken,
    portal: {
      baseUrl: portalBaseUrl ? portalBaseUrl.href.replace(/\/+$/, '') : null,
      trustedProxyHops: r.integer('DOCGEN_PORTAL_TRUSTED_PROXY_HOPS', 0, 10),
    },
    secretKey,
    mongodb: {
      url: mongoUrl,
      database: r.string('DOCGEN_MONGODB_DATABASE', '', false),
      serverSelectionTimeoutMs: r.integer('DOCGEN_MONGODB_SERVER_SELECTION_TIMEOUT_MS', 1000, 600_000),
      operationTimeoutMs: r.integer('DOCGEN_MONGODB_OPERATION_TIMEOUT_MS', 1000, 600_000),
    },
    nats: { servers: natsServers, streamPrefix },
    s3: {
      endpoint: s3Endpoint ?? new URL('http://invalid.invalid'),
      publicEndpoint: s3Public ?? s3Endpoint ?? new URL('http://invalid.invalid'),
      accessKey: s3AccessKey,
      secretKey: s3SecretKey,
      bucket,
      region: r.string('DOCGEN_S3_REGION', '', false),
    },
    render: {
      chromiumPath: r.string('DOCGEN_CHROMIUM_PATH', '', false),
      noSandbox: r.boolean('DOCGEN_CHROMIUM_NO_SANDBOX'),
      fontconfigFile: chromiumFontconfig.ok ? chromiumFontconfig.file : null,
      concurrency: r.integer('DOCGEN_RENDER_CONCURRENCY', 1, 64),
      timeoutMs: r.integer('DOCGEN_RENDER_TIMEOUT_MS', 1000, 300000),
      liquidTimeoutMs: r.integer('DOCGEN_LIQUID_TIMEOUT_MS', 100, 60000),
      liquidMemoryMb: r.integer('DOCGEN_LIQUID_MEMORY_MB', 16, 4096),
      browserRecycleAfterRenders: r.integer('DOCGEN_BROWSER_RECYCLE_RENDERS', 1, 1000000),
      browserMaxRssMb: r.integer('DOCGEN_BROWSER_MAX_RSS_MB', 128, 65536),
      maxAttempts: r.integer('DOCGEN_RENDER_MAX_ATTEMPTS', 1, 10),
      loadTimeoutMs: r.integer('DOCGEN_RENDER_LOAD_TIMEOUT_MS', 500, 300000),
      maxHtmlBytes: r.integer('DOCGEN_RENDER_MAX_HTML_BYTES', 64 * 1024, 512 * 1024 * 1024),
      timestampUrl:
        r.url(
          'DOCGEN_TIMESTAMP_URL',
          ['http:', 'https:'],
          false,
          'Set it to the address of an RFC 3161 timestamp authority, or leave it unset for signatures without a timestamp.',
        )?.href ?? null,
    },
    http: {
      headersTimeoutMs: r.integer('DOCGEN_HTTP_HEADERS_TIMEOUT_MS', 1000, 600000),
      requestTimeoutMs: r.integer('DOCGEN_HTTP_REQUEST_TIMEOUT_MS', 1000, 3600000),
      keepAliveTimeoutMs: r.integer('DOCGEN_HTTP_KEEP_ALIVE_TIMEOUT_MS', 1000, 3600000),
      maxConnections: r.integer('DOCGEN_HTTP_MAX_CONNECTIONS', 1, 1000000),
    },
    previews: { concurrency: r.integer('DOCGEN_PREVIEW_CONCURRENCY', 1, 64) },
    api: {
      rateLimitPerSecond: r.number('DOCGEN_RATE_LIMIT_PER_SECOND', 0.001, 1000000),
      rateLimitBurst: r.integer('DOCGEN_RATE_LIMIT_BURST', 1, 1000000),
      maxBodyBytes: r.integer('DOCGEN_MAX_BODY_BYTES', 1024, 64 * 1024 * 1024),
      apiKeyCacheMs: r.integer('DOCGEN_API_KEY_CACHE_MS', 0, 1000),
      maxKeysPerWorkspace: r.integer('DOCGEN_API_KEYS_PER_WORKSPACE', 1, 100_000),
      outputUrlTtlSeconds: r.integer('DOCGEN_OUTPUT_URL_TTL_SECONDS', 1, 604800),
      batchMaxItems: r.integer('DOCGEN_BATCH_MAX_ITEMS', 1, 10000),
      batchCreationGraceMs: r.integer('DOCGEN_BATCH_CREATION_GRACE_MS', 5000, 3_600_000),
    },
    assets: {
      maxBytes: r.integer('DOCGEN_ASSET_MAX_BYTES', 1024, 256 * 1024 * 1024),
      workspaceQuotaBytes: r.integer('DOCGEN_ASSET_WORKSPACE_QUOTA_BYTES', 1024, Number.MAX_SAFE_INTEGER),
    },
    webhooks: {
      allowInsecureUrls: r.boolean('DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS'),
      allowedPorts: r.ports('DOCGEN_WEBHOOK_ALLOWED_PORTS'),
      timeoutMs: r.integer('DOCGEN_WEBHOOK_TIMEOUT_MS', 100, 60000),
      concurrency: r.integer('DOCGEN_WEBHOOK_CONCURRENCY', 1, 10000),
      endpointConcurrency: r.integer('DOCGEN_WEBHOOK_ENDPOINT_CONCURRENCY', 1, 1000),
    },
    retention: {
      sweepIntervalMs: r.integer('DOCGEN_RETENTION_SWEEP_INTERVAL_MS', 1000, 3_600_000),
      testGenerationSeconds: r.integer('DOCGEN_TEST_GENERATION_RETENTION_SECONDS', 60, 30 * 86_400),
    },
    logLevel: logLevel as Config['logLevel'],
    shutdownGraceMs: r.integer('DOCGEN_SHUTDOWN_GRACE_MS', 0, 600000),
  };

  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}
