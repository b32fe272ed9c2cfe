// Static checks of deploy/Dockerfile and .dockerignore (no Docker engine here), and that the
// image and the Helm chart agree on the user, the Chromium path and the ports.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dockerfile = readFileSync(path.join(repo, 'deploy/Dockerfile'), 'utf8');
const dockerignore = readFileSync(path.join(repo, '.dockerignore'), 'utf8');
const values = parseYaml(readFileSync(path.join(repo, 'deploy/helm/docgen/values.yaml'), 'utf8')) as {
  podSecurityContext: { runAsUser: number; runAsGroup: number };
  config: { render: { chromiumPath: string } };
  ports: Record<string, number>;
};

// Instructions with line continuations joined, comments dropped.
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('Dockerfile', () => {
  it('builds on Node 24 slim, Debian bookworm', () => {
    expect(dockerfile).toMatch(/ARG NODE_IMAGE=node:24-bookworm-slim/);
    expect(instructions.filter((i) => i.startsWith('FROM ')).every((i) => i.includes('${NODE_IMAGE}'))).toBe(true);
  });

  it('installs Chromium, fonts and tini from Debian', () => {
    const apt = instructions.find((i) => i.includes('apt-get install'))!;
    for (const pkg of [
      'chromium-headless-shell',
      'fonts-liberation',
      'fonts-noto-core',
      'fonts-noto-cjk',
      'fonts-noto-color-emoji',
      'qpdf',
      'icc-profiles-free',
      'libxml2-utils',
      'tini',
    ])
      expect(apt).toMatch(new RegExp(`\\s${pkg}\\s`));
    expect(apt).toContain('--no-install-recommends');
    expect(apt).toContain('rm -rf /var/lib/apt/lists/*');
  });

  it('installs production dependencies only, without downloading a browser', () => {
    const npm = instructions.find((i) => i.includes('npm ci'))!;
    expect(npm).toContain('--omit=dev');
    expect(npm).toContain('--ignore-scripts');
    expect(dockerfile).toMatch(/PUPPETEER_SKIP_DOWNLOAD=true/);
  });

  it('runs as uid 10001 under tini with docgen serve, matching the chart', () => {
    expect(instructions).toContain('USER 10001:10001');
    expect(values.podSecurityContext.runAsUser).toBe(10001);
    expect(values.podSecurityContext.runAsGroup).toBe(10001);
    expect(instructions).toContain('ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/docgen.js"]');
    expect(instructions).toContain('CMD ["serve", "--role", "all"]');
    expect(dockerfile).toMatch(/DOCGEN_CHROMIUM_PATH=\/usr\/bin\/chromium-headless-shell\s/);
    expect(values.config.render.chromiumPath).toBe('/usr/bin/chromium-headless-shell');
    const exposed = instructions
      .find((i) => i.startsWith('EXPOSE '))!
      .split(/\s+/)
      .slice(1)
      .map(Number);
    expect(exposed.sort()).toEqual([values.ports.public, values.ports.admin, values.ports.ops].sort());
  });

  it('copies files that exist', () => {
    const copy = instructions.find((i) => i.startsWith('COPY package.json'))!;
    for (const f of copy.split(/\s+/).slice(1, -1)) expect(existsSync(path.join(repo, f)), f).toBe(true);
    expect(existsSync(path.join(repo, 'bin/docgen.js'))).toBe(true);
  });
});

describe('.dockerignore', () => {
  const lines = dockerignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  it('is an allow-list: everything out, then the sources and the lock file back in', () => {
    expect(lines[0]).toBe('*');
    for (const keep of ['!bin/', '!src/', '!package.json', '!package-lock.json', '!.npmrc', '!.puppeteerrc.cjs'])
      expect(lines).toContain(keep);
    for (const never of ['!node_modules', '!.git', '!test/', '!.docgen/', '!deploy/'])
      expect(lines).not.toContain(never);
  });
});
