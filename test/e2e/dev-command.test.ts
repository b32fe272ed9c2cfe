// `docgen dev` as a user runs it: it prints a banner with a working key and template, the
// curl flow completes, SIGTERM stops everything it started, a restart keeps the data, and
// each start has a new operator token that the CLI finds in the data directory.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAdminCli } from '../../src/cli/admin/run-admin-cli.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { spawnDocgen, type DocgenProcess } from '../harness/spawn-docgen.ts';

function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

function alive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(state);
  } catch {
    return false;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

interface Banner {
  base: string;
  workspaceId: string;
  apiKey: string;
  templateId: string;
  curl: string;
  /** The owner's single-use invitation link (empty once the password is set). */
  invite: string;
  /** The operator token of this start. */
  adminToken: string;
}

async function startDev(dataDir: string): Promise<{ proc: DocgenProcess; banner: Banner }> {
  const started = Date.now();
  const proc = spawnDocgen({
    args: ['dev'],
    env: {
      DOCGEN_DATA_DIR: dataDir,
      DOCGEN_PUBLIC_ADDR: '127.0.0.1:0',
      DOCGEN_ADMIN_ADDR: '127.0.0.1:0',
      DOCGEN_OPS_ADDR: '127.0.0.1:0',
    },
  });
  await proc.waitForLine((l) => l.text.includes('Press Ctrl+C to stop.'), 60_000);
  expect(Date.now() - started).toBeLessThan(60_000);
  const text = proc.output();
  const pick = (re: RegExp) => re.exec(text)?.[1] ?? '';
  return {
    proc,
    banner: {
      base: pick(/public API \(REST \/v1, Connect, gRPC\)\s+(http:\/\/\S+)/),
      workspaceId: pick(/workspace id\s+(ws_\w+)/),
      apiKey: pick(/API key\s+(svc_live_\w+)/),
      templateId: pick(/sample template id\s+(tpl_\w+)/),
      curl: pick(/(curl -s -X POST[\s\S]*?-d '.*')/),
      invite: pick(/portal invite link\s+(http:\/\/\S+)/),
      adminToken: pick(/admin API \(docgen admin …\)\s+\S+\s+token: (\S+)/),
    },
  };
}

describe('docgen dev', () => {
  it('serves the banner flow, stops cleanly on SIGTERM and keeps its data across restarts', async () => {
    const dataDir = uniqueRunDir('dev-data');
    const first = await startDev(dataDir);
    const { base, apiKey, templateId, workspaceId, curl } = first.banner;
    expect(apiKey).toMatch(/^svc_live_[A-Za-z0-9]{32,}$/);
    expect(templateId).toMatch(/^tpl_/);

    // The banner's curl line, run by a shell exactly as printed, creates a generation.
    const created = JSON.parse(execFileSync('bash', ['-c', curl.replace(/\\\n\s*/g, ' ')], { encoding: 'utf8' })) as {
      id: string;
      status: string;
    };
    expect(created.status).toBe('PENDING');
    const done = await pollUntil(
      async () =>
        (await (
          await fetch(`${base}/v1/generations/${created.id}`, { headers: { authorization: `Bearer ${apiKey}` } })
        ).json()) as { status: string; outputUrl: string | null },
      (g) => g.status === 'COMPLETED' || g.status === 'FAILED',
      { timeoutMs: 30_000, intervalMs: 200, description: 'generation to finish' },
    );
    expect(done.status, JSON.stringify(done)).toBe('COMPLETED');
    const pdf = await fetch(done.outputUrl!);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');

    // The banner's invitation link opens the portal (the single-page app answers every route).
    const invite = new URL(first.banner.invite);
    const page = await fetch(invite);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<div id="app">');

    // It sets the sample workspace owner's password, as the portal does.
    const accepted = await fetch(new URL('/docgen.admin.v1.SessionService/AcceptInvitation', invite.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: invite.origin },
      body: JSON.stringify({ token: invite.pathname.replace('/invite/', ''), password: 'dev owner passphrase' }),
    });
    expect(accepted.status).toBe(200);
    expect(((await accepted.json()) as { memberships: { workspaceId: string; role: string }[] }).memberships).toEqual([
      { workspaceId, workspaceName: 'Dev workspace', role: 'MEMBER_ROLE_OWNER' },
    ]);

    const children = descendants(first.proc.pid);
    expect(children.map(commandOf).some((c) => c.includes('nats-server'))).toBe(true);
    expect(children.map(commandOf).some((c) => c.includes('chromium'))).toBe(true);
    first.proc.kill('SIGTERM');
    const exit = await first.proc.exited;
    expect(exit.code).toBe(0);
    await pollUntil(
      async () => children.filter(alive),
      (left) => left.length === 0,
      {
        timeoutMs: 10_000,
        intervalMs: 100,
        description: 'no chromium, nats-server or node child left after SIGTERM',
      },
    );

    const second = await startDev(dataDir);
    try {
      // A new random operator token each start, written for the CLI; the old one stops working.
      expect(first.banner.adminToken).toMatch(/^dev_[\w-]{32}$/);
      expect(second.banner.adminToken).toMatch(/^dev_[\w-]{32}$/);
      expect(second.banner.adminToken).not.toBe(first.banner.adminToken);
      expect(readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim()).toBe(second.banner.adminToken);
      expect(statSync(path.join(dataDir, 'admin-token')).mode & 0o077).toBe(0);
      const adminUrl = `http://127.0.0.1:${/admin API \(docgen admin …\)\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(second.proc.output())![1]}`;
      const listWorkspaces = async (token: string | undefined) => {
        const out: string[] = [];
        const code = await runAdminCli(['workspace', 'list', '--json'], {
          stdout: { write: (c: string) => out.push(c) },
          stderr: { write: (c: string) => out.push(c) },
          env: { DOCGEN_ADMIN_URL: adminUrl, DOCGEN_DATA_DIR: dataDir, DOCGEN_ADMIN_TOKEN: token },
        });
        return { code, text: out.join('') };
      };
      // The CLI finds the token in the data directory, without DOCGEN_ADMIN_TOKEN.
      const listed = await listWorkspaces(undefined);
      expect(listed.code, listed.text).toBe(0);
      expect(listed.text).toContain(workspaceId);
      const stale = await listWorkspaces(first.banner.adminToken);
      expect(stale.code).toBe(1);
      expect(stale.text).toMatch(/Admin token invalid/);

      expect(second.banner.workspaceId).toBe(workspaceId);
      expect(second.banner.apiKey).toBe(apiKey);
      expect(second.banner.invite).toBe('');
      expect(second.proc.output()).toMatch(
        /portal sign-in\s+http:\/\/127\.0\.0\.1:\d+\/\s+as owner@example\.com \(password already set/,
      );
      const again = await fetch(`${second.banner.base}/v1/generations/${created.id}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(again.status).toBe(200);
      expect(((await again.json()) as { status: string }).status).toBe('COMPLETED');
    } finally {
      await second.proc.stop(15_000);
    }
  }, 150_000);
});
