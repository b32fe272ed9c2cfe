// `docgen admin` run in process for tests: the command line as an operator types it, its exit
// code and what it printed, against given clients or a running admin listener (env:
// DOCGEN_ADMIN_URL, DOCGEN_ADMIN_TOKEN); and admin clients on the admin handlers through
// createRouterTransport (workspaces, keys, templates; the real Liquid analyzer, no previews).
import { createRouterTransport } from '@connectrpc/connect';
import { expect } from 'vitest';
import { ApiKeyAdmin } from '../../src/admin/api-key-admin.ts';
import { TemplateAdmin } from '../../src/admin/template-admin.ts';
import { WorkspaceAdmin } from '../../src/admin/workspace-admin.ts';
import { adminClientsOn, type AdminClients } from '../../src/cli/admin/admin-client.ts';
import { runAdminCli } from '../../src/cli/admin/run-admin-cli.ts';
import { ApiKeyService } from '../../src/gen/docgen/admin/v1/api_key_pb.js';
import { TemplateService } from '../../src/gen/docgen/admin/v1/template_pb.js';
import { WorkspaceService } from '../../src/gen/docgen/admin/v1/workspace_pb.js';
import { analyzeTemplate, diagnoseTemplate } from '../../src/render/liquid/analyze-template.ts';
import { ApiKeyServiceHandler } from '../../src/rpc/admin-api-key-service.ts';
import { mapErrors } from '../../src/rpc/connect-errors.ts';
import { TemplateServiceHandler } from '../../src/rpc/admin-template-service.ts';
import { WorkspaceServiceHandler } from '../../src/rpc/admin-workspace-service.ts';
import type { InProcessStack } from './in-process.ts';
import { testPageTokens } from './test-config.ts';

/** Admin clients on the workspace, key and template handlers of an in-process stack. */
export function inProcessAdminClients(stack: InProcessStack): AdminClients {
  const { workspaces, apiKeys, templates, generations } = stack.repositories;
  const pageTokens = testPageTokens();
  const transport = createRouterTransport(({ service }) => {
    service(WorkspaceService, mapErrors(new WorkspaceServiceHandler(new WorkspaceAdmin({ workspaces, pageTokens }))));
    service(ApiKeyService, mapErrors(new ApiKeyServiceHandler(new ApiKeyAdmin({ workspaces, apiKeys, pageTokens }))));
    const renderPreview = async (): Promise<never> => {
      throw new Error('previews are not rendered in this test');
    };
    const admin = new TemplateAdmin({
      workspaces,
      templates,
      analyzeTemplate,
      diagnoseTemplate,
      renderPreview,
      generations,
      pageTokens,
    });
    service(TemplateService, mapErrors(new TemplateServiceHandler(admin)));
  });
  return adminClientsOn(transport);
}

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
