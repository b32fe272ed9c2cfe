// Pure tests: nothing here opens a connection. Lookups are injected functions that
// record their calls, so we can also show that a refused host is never connected to.
import { sendAttempt } from '../../src/webhooks/http-sender.ts';
import { describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  classifyAddress,
  isAddressAllowed,
  resolveAndCheck,
} from '../../src/webhooks/address-guard.ts';
import type { AddressCategory, HostLookup, ResolvedAddress } from '../../src/webhooks/address-guard.ts';

const TABLE: Array<[string, AddressCategory]> = [
  // loopback
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  // private
  ['10.0.0.5', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['fec0::1', 'private'],
  ['64:ff9b:1::a00:1', 'private'],
  // CGNAT
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  // link-local
  ['169.254.1.1', 'link-local'],
  ['fe80::1', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  // metadata
  ['169.254.169.254', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['168.63.129.16', 'metadata'],
  ['100.100.100.200', 'metadata'],
  // unique local
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  // unspecified, broadcast, multicast
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  // documentation, benchmarking, reserved
  ['192.0.2.10', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['2001:2::1', 'benchmarking'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['100::1', 'reserved'],
  ['2001::1', 'reserved'], // Teredo
  ['2002:0a00:0001::1', 'reserved'], // 6to4 (here of 10.0.0.1)
  ['2002:0808:0808::1', 'reserved'], // 6to4 of a public address: refused too
  ['::7f00:1', 'reserved'], // deprecated IPv4-compatible
  ['::ffff:0:a00:1', 'reserved'], // IPv4-translated
  ['4000::1', 'reserved'], // outside global unicast
  // IPv4-mapped IPv6: judged by the embedded IPv4 address
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.0.0.5', 'private'],
  ['::ffff:a00:5', 'private'],
  ['::ffff:192.168.0.1', 'private'],
  ['::ffff:100.64.0.1', 'cgnat'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['0:0:0:0:0:ffff:169.254.1.1', 'link-local'],
  ['::FFFF:0.0.0.0', 'unspecified'],
  // NAT64 well-known prefix: judged by the embedded IPv4 address
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::a9fe:a9fe', 'metadata'],
  // public
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['172.15.255.255', 'public'],
  ['172.32.0.0', 'public'],
  ['100.63.255.255', 'public'],
  ['100.128.0.0', 'public'],
  ['169.253.255.255', 'public'],
  ['192.169.0.1', 'public'],
  ['223.255.255.255', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001:82b::200e', 'public'],
  ['::ffff:8.8.8.8', 'public'],
  ['64:ff9b::808:808', 'public'],
  // not addresses
  ['localhost', 'invalid'],
  ['', 'invalid'],
  ['127.1', 'invalid'],
  ['0x7f000001', 'invalid'],
  ['2130706433', 'invalid'],
  ['010.0.0.1', 'invalid'],
  ['1.2.3.4:80', 'invalid'],
];

describe('address classifier', () => {
  it.each(TABLE)('%s is %s', (address, category) => {
    const v = classifyAddress(address);
    expect(v.category).toBe(category);
    expect(v.allowed).toBe(category === 'public');
    expect(isAddressAllowed(address, false)).toBe(category === 'public');
  });

  it('accepts bracketed IPv6 as URL.hostname gives it', () => {
    expect(classifyAddress('[::1]').category).toBe('loopback');
    expect(classifyAddress('[::ffff:10.0.0.5]').category).toBe('private');
  });

  it('explains mapped addresses', () => {
    expect(classifyAddress('::ffff:10.0.0.5').reason).toMatch(/IPv4-mapped 10\.0\.0\.5, a private address/);
  });

  it('in insecure mode allows everything but metadata and non-addresses', () => {
    for (const a of ['127.0.0.1', '::1', '10.0.0.5', '192.168.1.1', 'fe80::1', 'fd12::1', '8.8.8.8']) {
      expect(isAddressAllowed(a, true)).toBe(true);
    }
    for (const a of ['169.254.169.254', 'fd00:ec2::254', '::ffff:169.254.169.254', 'nonsense']) {
      expect(isAddressAllowed(a, true)).toBe(false);
    }
  });
});

function fakeLookup(answers: Record<string, string[] | Error>): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const a = answers[hostname];
    if (a === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    if (a instanceof Error) throw a;
    return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

describe('resolveAndCheck', () => {
  it('refuses a name resolving to a private address, without connecting', async () => {
    const lookup = fakeLookup({ 'hooks.example.com': ['10.0.0.5'] });
    const r = await resolveAndCheck('hooks.example.com', { allowInsecure: false, lookup });
    expect(r).toEqual({ ok: false, error: 'hooks.example.com resolves to 10.0.0.5 is a private address, refused' });
    expect(lookup.calls).toEqual(['hooks.example.com']);
  });

  it('refuses when ANY address is refused, whatever the order', async () => {
    for (const answer of [
      ['93.184.216.34', '169.254.169.254'],
      ['::ffff:127.0.0.1', '93.184.216.34'],
      ['2606:4700::1', 'fd00::1'],
    ]) {
      const lookup = fakeLookup({ 'mixed.example.com': answer });
      const r = await resolveAndCheck('mixed.example.com', { allowInsecure: false, lookup });
      expect(r.ok).toBe(false);
    }
  });

  it('returns every checked address of a public name, deduplicated, in resolver order', async () => {
    const lookup = fakeLookup({ 'hooks.example.com': ['2606:4700::1', '93.184.216.34', '93.184.216.34'] });
    const r = await resolveAndCheck('HOOKS.example.com.', { allowInsecure: false, lookup });
    expect(r).toEqual({
      ok: true,
      host: 'hooks.example.com',
      addresses: [
        { address: '2606:4700::1', family: 6 },
        { address: '93.184.216.34', family: 4 },
      ],
    });
  });

  it('checks IP literals without a lookup', async () => {
    const lookup = fakeLookup({});
    expect((await resolveAndCheck('127.0.0.1', { allowInsecure: false, lookup })).ok).toBe(false);
    expect((await resolveAndCheck('[::1]', { allowInsecure: false, lookup })).ok).toBe(false);
    expect((await resolveAndCheck('[::ffff:a9fe:a9fe]', { allowInsecure: true, lookup })).ok).toBe(false);
    expect(await resolveAndCheck('8.8.8.8', { allowInsecure: false, lookup })).toEqual({
      ok: true,
      host: '8.8.8.8',
      addresses: [{ address: '8.8.8.8', family: 4 }],
    });
    expect(await resolveAndCheck('[::1]', { allowInsecure: true, lookup })).toEqual({
      ok: true,
      host: '::1',
      addresses: [{ address: '::1', family: 6 }],
    });
    expect(lookup.calls).toEqual([]);
  });

  it('refuses localhost names without asking DNS, unless insecure', async () => {
    const lookup = fakeLookup({ localhost: ['127.0.0.1'], 'app.localhost': ['127.0.0.1'] });
    for (const name of ['localhost', 'LOCALHOST.', 'app.localhost']) {
      expect((await resolveAndCheck(name, { allowInsecure: false, lookup })).ok).toBe(false);
    }
    expect(lookup.calls).toEqual([]);
    expect(await resolveAndCheck('localhost', { allowInsecure: true, lookup })).toMatchObject({
      ok: true,
      addresses: [{ address: '127.0.0.1' }],
    });
  });

  it('in insecure mode still refuses metadata addresses', async () => {
    const lookup = fakeLookup({ 'meta.example.com': ['169.254.169.254'], 'dev.example.com': ['10.0.0.5', '::1'] });
    expect((await resolveAndCheck('meta.example.com', { allowInsecure: true, lookup })).ok).toBe(false);
    expect(await resolveAndCheck('dev.example.com', { allowInsecure: true, lookup })).toMatchObject({ ok: true });
  });

  it('reports DNS failures, empty answers and garbage answers as refusals', async () => {
    const lookup = fakeLookup({
      'empty.example.com': [],
      'junk.example.com': ['not-an-ip'],
      'fail.example.com': Object.assign(new Error('x'), { code: 'EAI_AGAIN' }),
    });
    expect(await resolveAndCheck('nx.example.com', { allowInsecure: false, lookup })).toEqual({
      ok: false,
      error: 'DNS lookup of nx.example.com failed (ENOTFOUND)',
    });
    expect(await resolveAndCheck('fail.example.com', { allowInsecure: false, lookup })).toEqual({
      ok: false,
      error: 'DNS lookup of fail.example.com failed (EAI_AGAIN)',
    });
    expect((await resolveAndCheck('empty.example.com', { allowInsecure: false, lookup })).ok).toBe(false);
    expect((await resolveAndCheck('junk.example.com', { allowInsecure: true, lookup })).ok).toBe(false);
    expect((await resolveAndCheck('', { allowInsecure: true, lookup })).ok).toBe(false);
  });
});

describe('checkWebhookUrl', () => {
  const lookup = fakeLookup({
    'hooks.example.com': ['93.184.216.34'],
    'internal.example.com': ['192.168.0.10'],
    'rebind.example.com': ['93.184.216.34', '127.0.0.1'],
  });
  const secure = { allowInsecure: false, lookup };
  const insecure = { allowInsecure: true, lookup };

  it('accepts a public https URL', async () => {
    expect(await checkWebhookUrl('https://hooks.example.com/docgen?x=1', secure)).toEqual([]);
    expect(await checkWebhookUrl('https://hooks.example.com:443/', secure)).toEqual([]);
  });

  it("allows ports 443 and 80 and the operator's list; insecure (development) mode any", async () => {
    const refusal =
      'port 8443 is not allowed: webhooks go to ports 443, 80 (the operator can allow more with DOCGEN_WEBHOOK_ALLOWED_PORTS)';
    expect(await checkWebhookUrl('https://hooks.example.com:8443/', secure)).toEqual([refusal]);
    for (const port of [22, 25, 3306, 6379, 9200, 27017])
      expect(await checkWebhookUrl(`https://hooks.example.com:${port}/`, secure), String(port)).toEqual([
        refusal.replace('8443', String(port)),
      ]);
    expect(await checkWebhookUrl('https://hooks.example.com:80/', secure)).toEqual([]);
    expect(await checkWebhookUrl('https://hooks.example.com:8443/', { ...secure, allowedPorts: [8443] })).toEqual([]);
    expect(await checkWebhookUrl('https://hooks.example.com:9443/', { ...secure, allowedPorts: [8443] })).toEqual([
      'port 9443 is not allowed: webhooks go to ports 443, 80, 8443 (the operator can allow more with DOCGEN_WEBHOOK_ALLOWED_PORTS)',
    ]);
    // Tests and `docgen dev` post to loopback receivers on any port.
    expect(await checkWebhookUrl('http://127.0.0.1:45678/hook', insecure)).toEqual([]);
  });

  it('requires https unless insecure URLs are allowed', async () => {
    expect(await checkWebhookUrl('http://hooks.example.com/', secure)).toEqual([
      'must use https:// (plain http:// is allowed only with DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS=true)',
    ]);
    expect(await checkWebhookUrl('http://hooks.example.com/', insecure)).toEqual([]);
    for (const url of [
      'ftp://hooks.example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'ws://hooks.example.com/',
    ]) {
      expect(await checkWebhookUrl(url, insecure)).toContain('must be an https:// URL');
    }
  });

  it('refuses credentials in the URL', async () => {
    expect(await checkWebhookUrl('https://user:pw@hooks.example.com/', secure)).toEqual([
      'must not contain credentials (user:password@)',
    ]);
    expect(await checkWebhookUrl('https://user@hooks.example.com/', insecure)).toEqual([
      'must not contain credentials (user:password@)',
    ]);
  });

  it('refuses hosts that are or resolve to refused addresses', async () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://localhost/',
      'https://10.0.0.5/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::ffff:169.254.169.254]/',
      'https://[::ffff:10.0.0.5]/',
      'https://[fe80::1]/',
      'https://internal.example.com/',
      'https://rebind.example.com/',
      // Alternative IPv4 spellings: the URL parser normalises them to dotted quads.
      'https://2130706433/',
      'https://0x7f.1/',
      'https://127.1/',
    ]) {
      const problems = await checkWebhookUrl(url, secure);
      expect(problems, url).toHaveLength(1);
      expect(problems[0], url).toMatch(/^host refused: /);
    }
  });

  it('allows loopback and private hosts in insecure mode, never metadata', async () => {
    expect(await checkWebhookUrl('http://127.0.0.1:8080/hook', insecure)).toEqual([]);
    expect(await checkWebhookUrl('http://[::1]:8080/hook', insecure)).toEqual([]);
    expect(await checkWebhookUrl('http://internal.example.com/', insecure)).toEqual([]);
    expect(await checkWebhookUrl('http://169.254.169.254/', insecure)).toHaveLength(1);
  });

  it('reports unparseable, unresolvable and overlong URLs', async () => {
    expect(await checkWebhookUrl('not a url', secure)).toEqual(['is not a valid URL']);
    expect(await checkWebhookUrl('https://nx.example.com/', secure)).toEqual([
      'host refused: DNS lookup of nx.example.com failed (ENOTFOUND)',
    ]);
    expect(await checkWebhookUrl('https://hooks.example.com/' + 'a'.repeat(2100), secure)).toHaveLength(1);
  });

  it('collects several problems at once', async () => {
    const problems = await checkWebhookUrl('http://u:p@10.0.0.1/', secure);
    expect(problems).toHaveLength(3);
  });
});

describe('sendAttempt', () => {
  it('refuses a port outside the list before connecting (an endpoint stored before the rule)', async () => {
    const lookup = fakeLookup({ 'hooks.example.com': ['93.184.216.34'] });
    const result = await sendAttempt({
      url: 'https://hooks.example.com:25/',
      headers: {},
      body: '{}',
      timeoutMs: 1_000,
      allowInsecure: false,
      lookup,
    });
    expect(result).toMatchObject({ ok: false, kind: 'refused' });
    expect(result.error).toContain('refused: port 25 is not allowed');
  });
});
