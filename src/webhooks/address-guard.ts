// Which addresses a webhook may be delivered to. Endpoint URLs are chosen by users, so
// without this guard docgen could be made to POST into its own network (databases, admin
// ports, the cloud metadata service). The classifier is pure; resolveAndCheck resolves a
// host once and returns only addresses that passed, and the sender connects to exactly
// those, so a DNS answer that changes between check and connect (rebinding) has no effect.
import { isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

export type AddressCategory =
  | 'public'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'metadata'
  | 'unique-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'invalid';

export interface AddressVerdict {
  /** The address as given (brackets and zone removed). */
  address: string;
  family: 4 | 6 | 0;
  category: AddressCategory;
  /** Allowed in production (only 'public' is). */
  allowed: boolean;
  /** Human-readable, e.g. "::ffff:10.0.0.5 is an IPv4-mapped private address". */
  reason: string;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses. The default uses the system resolver (hosts file included). */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardOptions {
  /** DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: lifts every refusal except metadata addresses. */
  allowInsecure: boolean;
  /** DOCGEN_WEBHOOK_ALLOWED_PORTS: ports besides 443 and 80 (insecure mode allows any). */
  allowedPorts?: readonly number[] | undefined;
  lookup?: HostLookup | undefined;
}

/** Ports every webhook URL may use; the operator adds more with DOCGEN_WEBHOOK_ALLOWED_PORTS. */
export const STANDARD_WEBHOOK_PORTS: readonly number[] = [443, 80];

/**
 * Why the URL's port is refused (undefined: allowed). An endpoint is a tenant's choice of where
 * docgen connects: limited to web ports, a URL cannot make docgen probe or talk to the other
 * services an address also serves (SMTP, databases, admin ports).
 */
export function webhookPortProblem(
  url: URL,
  options: Pick<GuardOptions, 'allowInsecure' | 'allowedPorts'>,
): string | undefined {
  if (options.allowInsecure) return undefined;
  const port = url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : Number(url.port);
  const allowed = [...STANDARD_WEBHOOK_PORTS, ...(options.allowedPorts ?? [])];
  if (allowed.includes(port)) return undefined;
  return `port ${port} is not allowed: webhooks go to ports ${allowed.join(', ')} (the operator can allow more with DOCGEN_WEBHOOK_ALLOWED_PORTS)`;
}

/**
 * The URL as shown to those who may only look (viewers, the audit trail): scheme, host, port and
 * path. The query string and user info can carry secrets (tokens some receivers take there).
 */
export function shownWebhookUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const hidden = parsed.search !== '' || parsed.username !== '' || parsed.password !== '';
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}${hidden ? (parsed.search !== '' ? '?…' : '') : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

export type ResolveResult = { ok: true; host: string; addresses: ResolvedAddress[] } | { ok: false; error: string };

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export const systemLookup: HostLookup = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

// [CIDR, category]; the CIDRs are parsed once by ipaddr.js.
type Rule = [cidr: string, category: AddressCategory];

// IANA special-purpose registries; most specific first, first match wins.
const V4_RULES = parseRules([
  ['169.254.169.254/32', 'metadata'], // AWS, GCP, Azure, OCI instance metadata
  ['169.254.170.2/32', 'metadata'], // AWS ECS task metadata
  ['169.254.169.253/32', 'metadata'], // AWS VPC DNS
  ['168.63.129.16/32', 'metadata'], // Azure WireServer: public-looking, host-only
  ['100.100.100.200/32', 'metadata'], // Alibaba Cloud metadata
  ['255.255.255.255/32', 'broadcast'],
  ['0.0.0.0/8', 'unspecified'], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'], // deprecated 6to4 relay anycast
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
]);

// IPv6 is an allow-list: only global unicast (2000::/3) minus its special blocks is public.
const V6_RULES = parseRules([
  ['fd00:ec2::254/128', 'metadata'], // AWS IMDS
  ['fd00:ec2::253/128', 'metadata'], // AWS DNS
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'], // local-use NAT64 (RFC 8215)
  ['100::/64', 'reserved'], // discard-only
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['2001:2::/48', 'benchmarking'],
  ['2001::/23', 'reserved'], // IETF protocol assignments, incl. Teredo (2001::/32)
  ['2002::/16', 'reserved'], // 6to4: tunnels to any IPv4, private ones included
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'], // deprecated site-local
  ['ff00::/8', 'multicast'],
  ['2000::/3', 'public'],
]);

// 64:ff9b::/96 (well-known NAT64 prefix, RFC 6052): a NAT64 gateway forwards to the IPv4 host.
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

/** Classifies one IP address (v4 or v6, no port). Anything that is not an IP is 'invalid'. */
export function classifyAddress(input: string): AddressVerdict {
  const address = stripBrackets(String(input)).split('%')[0]!;
  const zoned = String(input).includes('%');
  // node:net decides what is an IP literal (dotted-decimal IPv4 only; ipaddr.js would also
  // take forms like "0x7f.1"); ipaddr.js parses and matches it.
  const family = isIP(address);
  if (family === 4) {
    const category = match(ipaddr.IPv4.parse(address), V4_RULES) ?? 'public';
    return verdict(address, 4, category, `${address} is ${describe(category)}`);
  }
  if (family === 6) {
    let parsed: ipaddr.IPv6;
    try {
      parsed = ipaddr.IPv6.parse(address);
    } catch {
      return verdict(address, 6, 'invalid', `${address} is not a valid IP address`);
    }
    // Addresses that carry an IPv4 address reach that IPv4 host: judge the embedded one.
    const embedded = embeddedV4(parsed);
    if (embedded) {
      const inner = match(embedded.address, V4_RULES) ?? 'public';
      const v4 = embedded.address.toString();
      return verdict(address, 6, inner, `${address} is ${embedded.kind} ${v4}, ${describe(inner)}`);
    }
    let category = match(parsed, V6_RULES) ?? 'reserved';
    // A zone id only means something on link-local scope: never a public destination.
    if (zoned && category === 'public') category = 'link-local';
    return verdict(address, 6, category, `${address} is ${describe(category)}`);
  }
  return verdict(address, 0, 'invalid', `${JSON.stringify(String(input))} is not an IP address`);
}

/** Whether an address may be connected to under the given policy. */
export function isAddressAllowed(address: string, allowInsecure: boolean): boolean {
  const v = classifyAddress(address);
  return permitted(v, allowInsecure);
}

/**
 * Resolves `host` (a name, an IP literal, or a bracketed IPv6 literal from URL.hostname)
 * and checks every address. Refuses if ANY address is refused: a name that points at
 * both a public and an internal address is either misconfigured or an attack, and a
 * partial answer would make delivery depend on which record came first.
 * On success, `addresses` are the only ones the caller may connect to.
 */
export async function resolveAndCheck(host: string, options: GuardOptions): Promise<ResolveResult> {
  const name = stripBrackets(host).toLowerCase().replace(/\.$/, '');
  if (name === '') return { ok: false, error: 'the URL has no host' };
  if (isIP(name.split('%')[0]!) !== 0) {
    const v = classifyAddress(name);
    if (!permitted(v, options.allowInsecure)) return { ok: false, error: refusal(v) };
    return { ok: true, host: name, addresses: [{ address: v.address, family: v.family === 6 ? 6 : 4 }] };
  }
  // RFC 6761: these names are the local host whatever DNS says; refuse without asking it.
  if (!options.allowInsecure && (name === 'localhost' || name.endsWith('.localhost'))) {
    return { ok: false, error: `${name} is a loopback host name, refused` };
  }
  let answers: ResolvedAddress[];
  try {
    answers = await (options.lookup ?? systemLookup)(name);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException)?.code;
    return { ok: false, error: `DNS lookup of ${name} failed${code ? ` (${code})` : ''}` };
  }
  if (!Array.isArray(answers) || answers.length === 0) return { ok: false, error: `${name} has no addresses` };
  const addresses: ResolvedAddress[] = [];
  for (const answer of answers) {
    const v = classifyAddress(answer?.address ?? '');
    if (!permitted(v, options.allowInsecure)) return { ok: false, error: `${name} resolves to ${refusal(v)}` };
    if (!addresses.some((a) => a.address === v.address))
      addresses.push({ address: v.address, family: v.family === 6 ? 6 : 4 });
  }
  return { ok: true, host: name, addresses };
}

/**
 * Checks a webhook URL at endpoint creation. Returns the problems (empty: acceptable):
 * https only unless insecure URLs are allowed, no credentials, and a host that is not,
 * and does not resolve to, a refused address.
 */
export async function checkWebhookUrl(url: string, options: GuardOptions): Promise<string[]> {
  if (typeof url !== 'string' || url.length > MAX_WEBHOOK_URL_LENGTH) {
    return [`must be a URL of at most ${MAX_WEBHOOK_URL_LENGTH} characters`];
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return ['is not a valid URL'];
  }
  const problems: string[] = [];
  const web = parsed.protocol === 'https:' || parsed.protocol === 'http:';
  if (!web) problems.push('must be an https:// URL');
  else if (parsed.protocol === 'http:' && !options.allowInsecure) {
    problems.push('must use https:// (plain http:// is allowed only with DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS=true)');
  }
  if (parsed.username !== '' || parsed.password !== '') problems.push('must not contain credentials (user:password@)');
  const portProblem = web ? webhookPortProblem(parsed, options) : undefined;
  if (portProblem) problems.push(portProblem);
  if (web) {
    const result = await resolveAndCheck(parsed.hostname, options);
    if (!result.ok) problems.push(`host refused: ${result.error}`);
  }
  return problems;
}

function permitted(v: AddressVerdict, allowInsecure: boolean): boolean {
  if (v.category === 'invalid') return false;
  // Insecure mode is for local development; nobody needs to post to the metadata service.
  if (allowInsecure) return v.category !== 'metadata';
  return v.allowed;
}

function refusal(v: AddressVerdict): string {
  return v.category === 'invalid' ? v.reason : `${v.reason}, refused`;
}

function verdict(address: string, family: 4 | 6 | 0, category: AddressCategory, reason: string): AddressVerdict {
  return { address, family, category, allowed: category === 'public', reason };
}

function describe(category: AddressCategory): string {
  switch (category) {
    case 'public':
      return 'a public address';
    case 'cgnat':
      return 'a carrier-grade NAT (100.64.0.0/10) address';
    case 'metadata':
      return 'a cloud metadata address';
    case 'unspecified':
      return 'an unspecified address';
    case 'unique-local':
      return 'a unique-local address';
    default:
      return `a ${category} address`;
  }
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function parseRules<T extends ipaddr.IPv4 | ipaddr.IPv6>(
  rules: Rule[],
): Array<[range: [T, number], category: AddressCategory]> {
  return rules.map(([cidr, category]) => [ipaddr.parseCIDR(cidr) as [T, number], category]);
}

function match<T extends ipaddr.IPv4 | ipaddr.IPv6>(
  address: T,
  rules: Array<[range: [T, number], category: AddressCategory]>,
): AddressCategory | undefined {
  for (const [range, category] of rules) {
    if (address.match(range)) return category;
  }
  return undefined;
}

function embeddedV4(address: ipaddr.IPv6): { kind: string; address: ipaddr.IPv4 } | undefined {
  // ::ffff:a.b.c.d (IPv4-mapped)
  if (address.isIPv4MappedAddress()) return { kind: 'IPv4-mapped', address: address.toIPv4Address() };
  if (address.match(NAT64)) return { kind: 'NAT64 for', address: new ipaddr.IPv4(address.toByteArray().slice(12)) };
  return undefined;
}
