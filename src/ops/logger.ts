// Structured JSON logs: one line per record on stdout, which is what Kubernetes log
// collectors expect. Secrets never reach a log line: redaction runs on every record, at
// any depth, on field names and on string contents (a key pasted into an error message
// is masked too). pino writes the lines; redaction is docgen's own (see redact()).
import { pino, type Logger as PinoInstance } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  readonly level: LogLevel;
  isLevelEnabled(level: LogLevel): boolean;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` (e.g. requestId, generationId) to every record. */
  child(fields: LogFields): Logger;
}

/** Anything with a `write(string)`: process.stdout, a file stream, a test capture. */
export interface LogStream {
  write(chunk: string): unknown;
}

export interface LoggerOptions {
  /** Records below this level are dropped (config.logLevel). Default `info`. */
  level?: LogLevel;
  /** The process role(s), e.g. `api` or `api,render,webhooks`; on every record. */
  role?: string;
  /** Default process.stdout. */
  stream?: LogStream;
  /** Fields bound to every record. */
  fields?: LogFields;
  /** Injected for tests. */
  now?: () => Date;
}

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const RESERVED = new Set(['time', 'level', 'msg', 'role']);

export const REDACTED = '[REDACTED]';
const MAX_DEPTH = 8;
const MAX_STRING = 8192;

// Field names whose values are always masked. Compared after lower-casing and dropping
// `-` and `_`, so `x-api-key`, `api_key` and `apiKey` are the same name.
const SECRET_NAMES = new Set([
  'secret',
  'token',
  'password',
  'passwd',
  'authorization',
  'proxyauthorization',
  'apikey',
  'key',
  'cookie',
  'setcookie',
  'credentials',
  'signature',
  'xservicesignature',
]);
// Suffixes that mark a secret too: adminToken, secretKey, accessKey, webhookSecret, …
const SECRET_SUFFIXES = ['secret', 'token', 'password', 'apikey', 'secretkey', 'accesskey', 'privatekey'];

export function isSecretFieldName(name: string): boolean {
  const n = name.toLowerCase().replace(/[-_]/g, '');
  if (SECRET_NAMES.has(n)) return true;
  return SECRET_SUFFIXES.some((suffix) => n.endsWith(suffix));
}

// Patterns masked inside any string, whatever field it is in.
const STRING_PATTERNS: [RegExp, string][] = [
  // API keys (docs/interface.md#api-keys): svc_live_ or svc_test_ + base62.
  [/svc_live_[A-Za-z0-9]+/g, `svc_live_${REDACTED}`],
  [/svc_test_[A-Za-z0-9]+/g, `svc_test_${REDACTED}`],
  // Webhook signing secrets (docs/interface.md#webhooks).
  [/whsec_[A-Za-z0-9+/=_-]+/g, `whsec_${REDACTED}`],
  // Bearer tokens in header dumps or error messages.
  [/\b(Bearer)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`],
  // Basic auth header values.
  [/\b(Basic)\s+[A-Za-z0-9+/]{8,}=*/g, `$1 ${REDACTED}`],
  // user:password@ in connection strings (mongodb://, nats://, http://).
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi, `$1${REDACTED}@`],
  // Pre-signed URL signatures and credentials: whoever holds them can download the PDF.
  [/\b(X-Amz-(?:Signature|Credential|Security-Token)=)[^&\s"']+/gi, `$1${REDACTED}`],
];

export function redactString(value: string): string {
  let out = value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…[truncated]` : value;
  for (const [pattern, replacement] of STRING_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** A copy of `value` that is safe to log: secret-named fields and secret-looking strings masked. */
export function redact(value: unknown): unknown {
  return redactValue(value, 0, new WeakSet());
}

function redactValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value === 'function' || typeof value === 'symbol') return undefined;
    if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
    return value;
  }
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';
  seen.add(value);
  try {
    if (value instanceof Error) return redactError(value, depth, seen);
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
    if (Buffer.isBuffer(value) || ArrayBuffer.isView(value))
      return `[${value.constructor.name} ${value.byteLength} bytes]`;
    if (value instanceof URL) return redactString(value.href);
    if (value instanceof Map) return redactObject(Object.fromEntries(value), depth, seen);
    if (value instanceof Set) return [...value].map((v) => redactValue(v, depth + 1, seen));
    if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, seen));
    // Headers objects (fetch) iterate as [name, value] pairs.
    if (typeof (value as { entries?: unknown }).entries === 'function' && value.constructor?.name === 'Headers') {
      return redactObject(Object.fromEntries(value as unknown as Iterable<[string, string]>), depth, seen);
    }
    return redactObject(value as Record<string, unknown>, depth, seen);
  } finally {
    seen.delete(value);
  }
}

function redactObject(obj: Record<string, unknown>, depth: number, seen: WeakSet<object>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined) continue;
    out[k] = isSecretFieldName(k) && v !== null && v !== '' ? REDACTED : redactValue(v, depth + 1, seen);
  }
  return out;
}

function redactError(err: Error, depth: number, seen: WeakSet<object>): Record<string, unknown> {
  const out: Record<string, unknown> = { name: err.name, message: redactString(err.message) };
  // Own enumerable properties (code, errno, status, …) may carry secrets too.
  for (const [k, v] of Object.entries(err)) {
    if (k === 'name' || k === 'message' || k === 'stack' || v === undefined) continue;
    out[k] = isSecretFieldName(k) && v !== null && v !== '' ? REDACTED : redactValue(v, depth + 1, seen);
  }
  if (err.stack) out.stack = redactString(err.stack);
  if (err.cause !== undefined) out.cause = redactValue(err.cause, depth + 1, seen);
  return out;
}

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as string[]).includes(value);
}

/**
 * The Logger on pino: pino writes the JSON lines (level filter, time, envelope, safe
 * serialisation); this class keeps docgen's record shape and runs redaction on every record
 * first. Bound fields live here rather than in pino's child bindings so that a call field
 * replaces a bound one instead of repeating the key in the line.
 */
class PinoLogger implements Logger {
  readonly level: LogLevel;
  private readonly pino: PinoInstance;
  private readonly bound: LogFields;

  constructor(pino: PinoInstance, level: LogLevel, bound: LogFields) {
    this.pino = pino;
    this.level = level;
    this.bound = bound;
  }

  isLevelEnabled(level: LogLevel): boolean {
    return LEVEL_RANK[level] >= LEVEL_RANK[this.level];
  }

  debug(msg: string, fields?: LogFields): void {
    this.write('debug', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.write('info', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.write('warn', msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.write('error', msg, fields);
  }

  child(fields: LogFields): Logger {
    return new PinoLogger(this.pino, this.level, { ...this.bound, ...fields });
  }

  private write(level: LogLevel, msg: string, fields: LogFields | undefined): void {
    if (!this.isLevelEnabled(level)) return;
    const record: Record<string, unknown> = {};
    const extra = redact({ ...this.bound, ...fields }) as Record<string, unknown>;
    for (const [k, v] of Object.entries(extra)) {
      // A field cannot overwrite the envelope; keep it under another name instead of losing it.
      record[RESERVED.has(k) ? `field_${k}` : k] = v;
    }
    this.pino[level](record, redactString(String(msg)));
  }
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const stream = options.stream ?? process.stdout;
  const now = options.now ?? (() => new Date());
  const instance = pino(
    {
      level,
      base: options.role === undefined ? null : { role: options.role },
      messageKey: 'msg',
      timestamp: () => `,"time":"${now().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      // Values arrive already redacted and plain (errors included): no pino serializers.
      serializers: { err: (value: unknown) => value },
    },
    {
      write(chunk: string) {
        try {
          stream.write(chunk);
        } catch {
          // A broken log stream must never take the service down.
        }
      },
    },
  );
  return new PinoLogger(instance, level, options.fields ?? {});
}

/** A logger that drops everything: a default for modules whose caller passes none. */
export const silentLogger: Logger = createLogger({ level: 'error', stream: { write: () => true } });
