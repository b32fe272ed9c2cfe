// `docgen migrate`: applies the schema steps (src/store/schema.ts) and reports them, then exits.
// Every docgen process does the same at start-up; this command exists for what should not wait
// on a rollout: a first index build on a large collection runs here without an operation
// time-out, before the new version is deployed (docs/deploy.md#schema-steps).
// Reads DOCGEN_MONGODB_URL and DOCGEN_MONGODB_DATABASE only.
import { describeError } from '../domain/errors.ts';
import { connectMongo, redactMongoUrl } from '../store/mongo.ts';
import { INDEX_STEPS } from '../store/documents.ts';
import { migrateSchema } from '../store/schema.ts';

export interface MigrateIo {
  env: Record<string, string | undefined>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export async function runMigrate(argv: string[], io: MigrateIo): Promise<number> {
  if (argv.length > 0 && !(argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h'))) {
    io.stderr.write(`docgen migrate: unknown argument ${JSON.stringify(argv[0])}\n`);
    return 2;
  }
  if (argv[0] === '--help' || argv[0] === '-h') {
    io.stdout.write(
      'Usage: docgen migrate\n  Applies the schema steps docgen needs to the database named by DOCGEN_MONGODB_URL and\n  DOCGEN_MONGODB_DATABASE (default docgen), waiting for index builds however long they take.\n',
    );
    return 0;
  }
  const url = io.env.DOCGEN_MONGODB_URL?.trim() ?? '';
  if (!/^mongodb(\+srv)?:\/\//.test(url)) {
    io.stderr.write('docgen migrate: set DOCGEN_MONGODB_URL to a mongodb:// or mongodb+srv:// connection string.\n');
    return 2;
  }
  const database = io.env.DOCGEN_MONGODB_DATABASE?.trim() || 'docgen';
  let connection;
  try {
    // No socket time-out: a first index build on a large collection may take minutes.
    connection = await connectMongo({
      url,
      database,
      appName: 'docgen-migrate',
      driverOptions: { socketTimeoutMS: 0 },
    });
  } catch (err) {
    io.stderr.write(`docgen migrate: ${describeError(err)}\n`);
    return 1;
  }
  try {
    const report = await migrateSchema(connection.db, { appliedBy: 'docgen migrate' });
    io.stdout.write(
      `${redactMongoUrl(url)} database ${database} (${report.server.kind === 'stand-in' ? 'embedded stand-in' : 'MongoDB'} ${report.server.version})\n`,
    );
    for (const step of INDEX_STEPS) {
      const applied = report.applied.find((a) => a.version === step.version);
      const state = applied ? `applied ${applied.appliedAt.toISOString()} by ${applied.appliedBy}` : 'pending';
      io.stdout.write(`  step ${step.version} ${step.name}: ${state}\n`);
    }
    for (const warning of report.warnings) io.stdout.write(`  note: ${warning}\n`);
    for (const problem of report.problems) io.stderr.write(`docgen migrate: ${problem}\n`);
    return report.problems.length > 0 ? 1 : 0;
  } catch (err) {
    io.stderr.write(`docgen migrate: ${describeError(err)}\n`);
    return 1;
  } finally {
    await connection.close().catch(() => {});
  }
}
