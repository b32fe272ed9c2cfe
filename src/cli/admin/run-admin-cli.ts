// `docgen admin …`: the operator's command line for the admin API (docs/admin.md). One
// subcommand per operation; human output by default, `--json` for scripts. It is a plain
// Connect client: everything it can do, the portal can do through the same services. This
// file finds the command, parses its flags and reports errors; commands.ts lists them.
import { parseArgs } from 'node:util';
import { adminClientsFromEnv, DEFAULT_ADMIN_URL, describeAdminError, type AdminClients } from './admin-client.ts';
import { UsageError, type Command, type Values } from './command.ts';
import { COMMANDS } from './commands.ts';

export interface AdminCliIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  env: Record<string, string | undefined>;
  /** The admin API's clients; by default built from DOCGEN_ADMIN_URL and DOCGEN_ADMIN_TOKEN. */
  clients?: AdminClients;
}

function usage(commands: Command[] = COMMANDS): string {
  const lines = commands.map((c) => `  docgen admin ${c.path.join(' ')} ${c.synopsis}\n      ${c.summary}`);
  return `Usage:\n${lines.join('\n')}

Every command accepts --json (machine-readable output) and --help.
Environment: DOCGEN_ADMIN_URL (default ${DEFAULT_ADMIN_URL}), DOCGEN_ADMIN_TOKEN (default: the token
\`docgen dev\` wrote to $DOCGEN_DATA_DIR/admin-token, ./.docgen/admin-token).`;
}

/** Runs one admin command; resolves to the exit code (0 ok, 1 refused/failed, 2 bad usage). */
export async function runAdminCli(argv: string[], io: AdminCliIo): Promise<number> {
  const write = (stream: AdminCliIo['stdout'], text: string) => stream.write(text.endsWith('\n') ? text : `${text}\n`);
  const words = argv.filter((a) => !a.startsWith('-'));
  if (
    argv.length === 0 ||
    words[0] === 'help' ||
    (words.length === 0 && argv.some((a) => a === '--help' || a === '-h'))
  ) {
    write(argv.length === 0 ? io.stderr : io.stdout, usage());
    return argv.length === 0 ? 2 : 0;
  }

  // The longest command path that the leading words spell.
  const command = COMMANDS.filter((c) => c.path.every((p, i) => argv[i] === p)).sort(
    (a, b) => b.path.length - a.path.length,
  )[0];
  if (!command) {
    const related = COMMANDS.filter((c) => c.path[0] === argv[0]);
    const wantsHelp = argv.includes('--help') || argv.includes('-h');
    if (wantsHelp && related.length > 0) {
      write(io.stdout, usage(related));
      return 0;
    }
    const what =
      related.length > 0
        ? `unknown command ${JSON.stringify(
            argv
              .slice(0, 3)
              .filter((a) => !a.startsWith('-'))
              .join(' '),
          )}`
        : `unknown resource ${JSON.stringify(argv[0])}`;
    write(io.stderr, `docgen admin: ${what}\n${usage(related.length > 0 ? related : COMMANDS)}`);
    return 2;
  }

  const commandUsage = `Usage: docgen admin ${command.path.join(' ')} ${command.synopsis} [--json]\n  ${command.summary}`;
  let values: Values;
  let args: string[];
  try {
    const parsed = parseArgs({
      args: argv.slice(command.path.length),
      options: { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    values = parsed.values as Values;
    args = parsed.positionals;
  } catch (err) {
    write(io.stderr, `docgen admin: ${(err as Error).message}\n${commandUsage}`);
    return 2;
  }
  if (values.help) {
    write(io.stdout, commandUsage);
    return 0;
  }
  const json = values.json === true;

  try {
    if (args.length !== command.positionals.length) {
      throw new UsageError(
        args.length < command.positionals.length
          ? `missing ${command.positionals.slice(args.length).join(' ')}`
          : `unexpected argument ${JSON.stringify(args[command.positionals.length])}`,
      );
    }
    for (const name of command.required ?? []) {
      if (values[name] === undefined || values[name] === '') throw new UsageError(`--${name} is required`);
    }
    const clients = io.clients ?? adminClientsFromEnv(io.env);
    await command.run({
      values,
      args,
      clients,
      json,
      print(jsonValue, human) {
        write(io.stdout, json ? JSON.stringify(jsonValue, null, 2) : human);
      },
    });
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      write(io.stderr, `docgen admin: ${err.message}\n${commandUsage}`);
      return 2;
    }
    write(io.stderr, `docgen admin: ${describeAdminError(err, io.env)}`);
    return 1;
  }
}
