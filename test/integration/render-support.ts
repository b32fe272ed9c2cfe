// Helpers for the render engine's integration tests: a loopback canary that counts every TCP
// connection (HTTP requests, WebSocket upgrades, bare preconnects alike), PDF text extraction
// with poppler's pdftotext, and /proc checks for leftover Chromium processes.

import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Canary {
  port: number;
  /** TCP connections accepted so far. */
  connections: number;
  /** Request lines seen (for failure messages). */
  seen: string[];
  close(): Promise<void>;
}

/** An HTTP + WebSocket-capable server on 127.0.0.1:0 that counts every connection. */
export async function startCanary(): Promise<Canary> {
  const sockets = new Set<Socket>();
  const canary = { port: 0, connections: 0, seen: [] as string[] };
  const server: Server = createServer((req, res) => {
    canary.seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('CANARY-REACHED');
  });
  server.on('connection', (socket) => {
    canary.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (req, socket) => {
    canary.seen.push(`UPGRADE ${req.url}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  canary.port = (server.address() as { port: number }).port;
  return Object.assign(canary, {
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** Text of a PDF (pdftotext, UTF-8, reading order). */
export async function pdfText(pdf: Buffer): Promise<string> {
  const child = run('pdftotext', ['-enc', 'UTF-8', '-', '-'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  child.child.stdin!.end(pdf);
  return (await child).stdout;
}

/** Page count and size (points) of a PDF, from pdfinfo. */
export async function pdfInfo(pdf: Buffer): Promise<{ pages: number; width: number; height: number }> {
  const child = run('pdfinfo', ['-'], { encoding: 'utf8' });
  child.child.stdin!.end(pdf);
  const out = (await child).stdout;
  const pages = Number(/^Pages:\s+(\d+)/m.exec(out)?.[1]);
  const size = /^Page size:\s+([\d.]+) x ([\d.]+) pts/m.exec(out);
  return { pages, width: Number(size?.[1]), height: Number(size?.[2]) };
}

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  cmdline: string;
  /** CPU time used so far (utime + stime), in clock ticks. */
  cpuTicks: number;
}

export function processes(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out.push({
        pid: Number(name),
        state: rest[0]!,
        ppid: Number(rest[1]),
        pgid: Number(rest[2]),
        cmdline,
        cpuTicks: Number(rest[11]) + Number(rest[12]),
      });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Processes (zombies included) whose command line mentions `dir` or that sit in group `pgid`. */
export function leftovers(options: { dir?: string; pgids?: number[] }): ProcInfo[] {
  return processes().filter(
    (p) => (options.dir !== undefined && p.cmdline.includes(options.dir)) || (options.pgids ?? []).includes(p.pgid),
  );
}

/** Polls until `check` returns true or `timeoutMs` passes; returns the last result. */
export async function eventually(check: () => boolean, timeoutMs = 5_000, intervalMs = 50): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
