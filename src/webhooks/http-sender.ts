// One webhook attempt: a POST that resolves to an outcome and never throws. The host is
// resolved and checked once (address-guard.ts) and the connection goes to those checked
// addresses only; the URL's host name still drives Host and TLS (SNI and certificate
// check), so HTTPS verifies as usual. One deadline covers everything: DNS, connect, TLS,
// sending, and the answer's status line and headers.
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { resolveAndCheck, webhookPortProblem } from './address-guard.ts';
import type { HostLookup, ResolvedAddress } from './address-guard.ts';

export interface AttemptRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer | string;
  /** Deadline of the whole attempt, in ms (DOCGEN_WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: allows http:// and private/loopback addresses. */
  allowInsecure: boolean;
  /** DOCGEN_WEBHOOK_ALLOWED_PORTS: ports besides 443 and 80. */
  allowedPorts?: readonly number[] | undefined;
  /** Resolver to check the host with; the system resolver by default. */
  lookup?: HostLookup | undefined;
  /** Replaces the per-process keep-alive agent (tests: an agent trusting a test CA). */
  agent?: http.Agent | undefined;
  /** Aborts the attempt (shutdown): it resolves at once with `aborted: true`, which is no verdict on the receiver. */
  signal?: AbortSignal | undefined;
}

/** What became of an attempt, in the terms of the docgen_webhook_attempts_total metric. */
export type AttemptKind = 'success' | 'http_error' | 'redirect' | 'timeout' | 'network_error' | 'refused';

export interface AttemptResult {
  /** A 2xx answer arrived within the deadline. */
  ok: boolean;
  kind: AttemptKind;
  /** Set when req.signal aborted the attempt before an outcome: do not count it against the receiver. */
  aborted?: boolean;
  /** The status answered; absent when no answer arrived. */
  statusCode?: number;
  /** Why the attempt failed; absent on success. */
  error?: string;
  durationMs: number;
  /** The first bytes of the answer's body (up to 4 KiB), for the attempt record. */
  responseExcerpt?: string;
  /** The address the request was sent to, when a connection was made. */
  remoteAddress?: string;
}

/** Bytes of the answer kept for the record. */
export const RESPONSE_EXCERPT_BYTES = 4 * 1024;
/** Bytes read (and discarded) at most; past it the connection is destroyed instead of drained. */
export const RESPONSE_READ_LIMIT_BYTES = 64 * 1024;

// Process-wide keep-alive agents: reusing TLS connections matters when one endpoint gets
// many deliveries. No socket limit, so requests never queue behind a slow endpoint's
// sockets (DOCGEN_WEBHOOK_*CONCURRENCY bound what is in flight). Idle sockets close after
// 4 s, before the common 5 s server keep-alive, to avoid reusing one the peer is closing.
// Separate pools per address policy: a pooled socket is only reused by a request that
// passed the same check it was opened under.
const AGENT_OPTIONS = {
  keepAlive: true,
  maxSockets: Infinity,
  maxFreeSockets: 256,
  timeout: 4_000,
  scheduling: 'lifo',
} as const;
const agents = new Map<string, http.Agent>();

function defaultAgent(secure: boolean, allowInsecure: boolean): http.Agent {
  const key = `${secure}:${allowInsecure}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = secure ? new https.Agent(AGENT_OPTIONS) : new http.Agent(AGENT_OPTIONS);
    agents.set(key, agent);
  }
  return agent;
}

/** Sends one attempt. Network problems, refusals and time-outs come back as `error`. */
export function sendAttempt(req: AttemptRequest): Promise<AttemptResult> {
  const started = performance.now();
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    let response: http.IncomingMessage | undefined;
    let remoteAddress: string | undefined;
    let excerpt: Buffer[] = [];
    let excerptBytes = 0;

    type Outcome = Pick<AttemptResult, 'ok' | 'kind' | 'statusCode' | 'error' | 'aborted'>;
    const statusOutcome = (status: number): Outcome => {
      if (status >= 200 && status < 300) return { ok: true, kind: 'success', statusCode: status };
      if (status >= 300 && status < 400) {
        const location = String(response?.headers.location ?? '').slice(0, 200);
        return {
          ok: false,
          kind: 'redirect',
          statusCode: status,
          error: `receiver answered ${status}, a redirect, which is not followed${location ? ` (Location: ${location})` : ''}`,
        };
      }
      return { ok: false, kind: 'http_error', statusCode: status, error: `receiver answered ${status}` };
    };

    const onAbort = () => {
      finish({ ok: false, kind: 'network_error', aborted: true, error: 'aborted: docgen is shutting down' });
      request?.destroy();
    };
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      const result: AttemptResult = { ...outcome, durationMs: Math.round(performance.now() - started) };
      if (excerptBytes > 0) result.responseExcerpt = Buffer.concat(excerpt).toString('utf8');
      if (remoteAddress) result.remoteAddress = remoteAddress;
      excerpt = [];
      resolve(result);
    };

    const timeoutMs = Number.isFinite(req.timeoutMs) && req.timeoutMs > 0 ? req.timeoutMs : 10_000;
    const timer = setTimeout(() => {
      // Status already in: the outcome is decided; only the body was still coming.
      if (response?.statusCode !== undefined) finish(statusOutcome(response.statusCode));
      else
        finish({
          ok: false,
          kind: 'timeout',
          error: `timed out after ${timeoutMs} ms${request ? '' : ' resolving the host'}`,
        });
      request?.destroy();
    }, timeoutMs);
    if (req.signal?.aborted) onAbort();
    else req.signal?.addEventListener('abort', onAbort, { once: true });

    const start = async () => {
      let url: URL;
      try {
        url = new URL(req.url);
      } catch {
        return finish({ ok: false, kind: 'refused', error: 'invalid URL' });
      }
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && req.allowInsecure)) {
        return finish({
          ok: false,
          kind: 'refused',
          error: `refused: ${url.protocol}// URLs are not allowed (https only)`,
        });
      }
      if (url.username !== '' || url.password !== '')
        return finish({ ok: false, kind: 'refused', error: 'refused: the URL contains credentials' });

      const checked = await resolveAndCheck(url.hostname, { allowInsecure: req.allowInsecure, lookup: req.lookup });
      if (settled) return;
      if (!checked.ok) return finish({ ok: false, kind: 'refused', error: `refused: ${checked.error}` });
      // Checked again here: the endpoint may predate the rule, or the operator narrowed the list.
      const portProblem = webhookPortProblem(url, req);
      if (portProblem) return finish({ ok: false, kind: 'refused', error: `refused: ${portProblem}` });

      const body = typeof req.body === 'string' ? Buffer.from(req.body, 'utf8') : req.body;
      const secure = url.protocol === 'https:';
      request = (secure ? https : http).request({
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...req.headers, 'Content-Length': String(body.length) },
        agent: req.agent ?? defaultAgent(secure, req.allowInsecure),
        lookup: pinnedLookup(checked.addresses),
      });
      request.on('socket', (socket) => {
        const note = () => {
          remoteAddress = socket.remoteAddress ?? remoteAddress;
        };
        if (socket.remoteAddress) note();
        else socket.once('connect', note);
      });
      request.on('response', (res) => {
        response = res;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (excerptBytes < RESPONSE_EXCERPT_BYTES) {
            const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - excerptBytes);
            excerpt.push(Buffer.from(part));
            excerptBytes += part.length;
          }
          // A huge answer: stop reading, and drop the connection rather than drain it.
          if (read > RESPONSE_READ_LIMIT_BYTES) {
            finish(statusOutcome(res.statusCode ?? 0));
            res.destroy();
          }
        });
        res.on('end', () => finish(statusOutcome(res.statusCode ?? 0)));
        res.on('close', () => finish(statusOutcome(res.statusCode ?? 0)));
        res.on('error', () => finish(statusOutcome(res.statusCode ?? 0)));
      });
      request.on('error', (err) => {
        if (response?.statusCode !== undefined) finish(statusOutcome(response.statusCode));
        else finish({ ok: false, kind: 'network_error', error: describeNetworkError(err) });
      });
      request.end(body);
    };

    start().catch((err: unknown) => finish({ ok: false, kind: 'network_error', error: describeNetworkError(err) }));
  });
}

/**
 * A `lookup` for http.request that answers only with the addresses checked before, so the
 * socket cannot reach anything else whatever DNS says by now. Handles both call styles
 * (`all: true` is used by Node's happy-eyeballs connect).
 */
function pinnedLookup(addresses: ResolvedAddress[]) {
  return (
    _hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const wanted =
      options?.family === 4 || options?.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    if (wanted.length === 0) {
      const err: NodeJS.ErrnoException = new Error('no checked address of the requested family');
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
      return;
    }
    if (options?.all)
      callback(
        null,
        wanted.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, wanted[0]!.address, wanted[0]!.family);
  };
}

/** A failed connection or request in a receiver-facing word or two (recorded on the attempt). */
function describeNetworkError(err: unknown): string {
  const e = err as (NodeJS.ErrnoException & { errors?: unknown[] }) | undefined;
  // Happy-eyeballs connect failures arrive as an AggregateError of one error per address.
  const first = (Array.isArray(e?.errors) ? (e.errors[0] as NodeJS.ErrnoException | undefined) : undefined) ?? e;
  const code = e?.code ?? first?.code;
  const message = String(first?.message || e?.message || err).slice(0, 300);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset by the receiver';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ETIMEDOUT':
      return 'connect timed out';
    case 'ENOTFOUND':
      return 'host not found';
  }
  if (typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL/.test(code)) {
    return `TLS failed (${code}): ${message}`;
  }
  if (typeof code === 'string' && code.startsWith('HPE_')) return `invalid HTTP answer (${code})`;
  return code ? `${code}: ${message}` : message;
}
