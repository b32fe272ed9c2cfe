// What a `docgen admin` command is, and the flag helpers every command group shares.
import type { AdminClients } from './admin-client.ts';

/** A mistake in the command line itself: exit code 2, with usage. */
export class UsageError extends Error {
  readonly usage: string | undefined;
  constructor(message: string, usage?: string) {
    super(message);
    this.name = 'UsageError';
    this.usage = usage;
  }
}

export type OptionSpec = { type: 'string' | 'boolean' };
export type Values = Record<string, string | boolean | undefined>;

export interface CommandContext {
  values: Values;
  args: string[];
  clients: AdminClients;
  json: boolean;
  /** Prints `json` with --json, `human` otherwise. */
  print(json: unknown, human: string): void;
}

export interface Command {
  path: string[];
  /** Positional arguments and flags, for the usage line. */
  synopsis: string;
  summary: string;
  positionals: string[];
  options: Record<string, OptionSpec>;
  required?: string[];
  run(ctx: CommandContext): Promise<void>;
}

export const PAGE_OPTIONS: Record<string, OptionSpec> = {
  'page-size': { type: 'string' },
  'page-token': { type: 'string' },
};

export function str(value: string | boolean | undefined): string {
  return typeof value === 'string' ? value : '';
}

export function list(value: string | boolean | undefined): string[] {
  return str(value)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function positiveInteger(flag: string, value: string | boolean | undefined): number {
  const text = str(value);
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 2 ** 31 - 1)
    throw new UsageError(`${flag} must be a whole number of 1 or more`);
  return Number(text);
}

export function positiveNumber(flag: string, value: string | boolean | undefined): number {
  const n = Number(str(value));
  if (str(value) === '' || !Number.isFinite(n) || n <= 0)
    throw new UsageError(`${flag} must be a number greater than 0`);
  return n;
}

export function page(values: Values): { pageSize: number; pageToken: string } {
  const size = values['page-size'];
  let pageSize = 0;
  if (size !== undefined) {
    if (!/^\d+$/.test(str(size))) throw new UsageError('--page-size must be a whole number');
    pageSize = Math.min(Number(size), 2 ** 31 - 1);
  }
  return { pageSize, pageToken: str(values['page-token']) };
}

export function need<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('The admin API sent an incomplete response');
  return value;
}
