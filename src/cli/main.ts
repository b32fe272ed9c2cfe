// The `docgen` command: `serve` (production, one or more roles), `dev` (everything on the
// embedded default, docs/interface.md#running-docgen) and `admin` (operator CLI for the admin API).
import { readFileSync } from 'node:fs';

const USAGE = `Usage:
  docgen serve --role api|render|webhooks|all   Run roles against external MongoDB, NATS and S3 (DOCGEN_* variables)
  docgen dev                                    Run everything on the embedded default, data in ./.docgen/
  docgen admin <resource> <command> [flags]     Drive the admin API (docgen admin help)
  docgen fonts build [--out DIR] [--if-stale]   Cut the CJK fonts Chromium prints fast (setup runs it)
  docgen migrate                                Apply the database's schema steps (indexes) and exit
  docgen version`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const { runServe } = await import('./serve-command.ts');
      return runServe(rest);
    }
    case 'dev': {
      const { runDev } = await import('../dev/dev-command.ts');
      return runDev(rest);
    }
    case 'admin': {
      const { runAdminCli } = await import('./admin/run-admin-cli.ts');
      return runAdminCli(rest, { stdout: process.stdout, stderr: process.stderr, env: process.env });
    }
    case 'migrate': {
      const { runMigrate } = await import('./migrate-command.ts');
      return runMigrate(rest, { env: process.env, stdout: process.stdout, stderr: process.stderr });
    }
    case 'fonts': {
      const { runFonts } = await import('./fonts-command.ts');
      return runFonts(rest);
    }
    case 'version':
    case '--version': {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        version: string;
      };
      process.stdout.write(`docgen ${pkg.version} (node ${process.version})\n`);
      return 0;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`docgen: unknown command ${JSON.stringify(command)}\n${USAGE}\n`);
      return 2;
  }
}

const code = await main(process.argv.slice(2));
// serve and dev keep running until a signal; the others are done.
if (code !== -1) process.exitCode = code;
