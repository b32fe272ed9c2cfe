// `docgen admin` run in process for tests: the command line as an operator types it, its exit
// code and what it printed, against given clients (createRouterTransport) or a running admin
// listener (env: DOCGEN_ADMIN_URL, DOCGEN_ADMIN_TOKEN).
import { expect } from 'vitest';
import type { AdminClients } from '../../src/cli/admin/admin-client.ts';
import { runAdminCli } from '../../src/cli/admin/run-admin-cli.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface InProcessCli {
  cli(...argv: string[]): Promise<CliResult>;
  /** Runs with --json, expects success and nothing on stderr, and parses the output. */
  json(...argv: string[]): Promise<Record<string, unknown>>;
}

export function inProcessCli(target: { clients: () => AdminClients } | { env: Record<string, string> }): InProcessCli {
  const cli = async (...argv: string[]): Promise<CliResult> => {
    let stdout = '';
    let stderr = '';
    const code = await runAdminCli(argv, {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      ...('env' in target ? { env: target.env } : { env: {}, clients: target.clients() }),
    });
    return { code, stdout, stderr };
  };
  return {
    cli,
    async json(...argv) {
      const result = await cli(...argv, '--json');
      expect(result.stderr, argv.join(' ')).toBe('');
      expect(result.code).toBe(0);
      return JSON.parse(result.stdout) as Record<string, unknown>;
    },
  };
}
