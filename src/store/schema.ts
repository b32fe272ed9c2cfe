// The database schema a docgen process needs before it serves: the declared indexes, changed
// only through numbered, named steps (INDEX_STEPS in documents.ts; docs/deploy.md#schema-steps),
// each recorded in `schema_migrations` once applied.
//
// What an index refusal means depends on the server:
//   - MongoDB: an error. A changed definition under an existing name (IndexOptionsConflict,
//     IndexKeySpecsConflict), duplicate data under a unique index, or a first build on a large
//     collection that outlasted the operation time-out. Serving without the index would lose a
//     guarantee or scan, so the process does not start serving: readiness names the index and
//     the fix, and the step is retried until it succeeds.
//   - The embedded stand-in (CongoDB): its known gaps (no unique or TTL enforcement, partial
//     filters dropped) are warnings; docgen's correctness does not depend on them.
import type { Db, IndexDescription } from 'mongodb';
import { deterministicObjectId } from '../domain/ids.ts';
import {
  COLLECTIONS,
  INDEX_STEPS,
  declaredIndexes,
  ensureIndexes,
  type IndexRefusal,
  type IndexStep,
} from './documents.ts';
import { isDuplicateKeyError } from './mongo.ts';

export type ServerKind = 'mongodb' | 'stand-in';

export interface ServerInfo {
  kind: ServerKind;
  version: string;
}

/** Which server this is: the embedded stand-in says so in buildInfo. */
export async function describeServer(db: Db): Promise<ServerInfo> {
  const info = await db.admin().command({ buildInfo: 1 });
  const engines = Array.isArray(info.storageEngines) ? (info.storageEngines as unknown[]) : [];
  const standIn = info.gitVersion === 'congodb' || engines.includes('congodb');
  return { kind: standIn ? 'stand-in' : 'mongodb', version: String(info.version ?? '') };
}

export interface AppliedStep {
  version: number;
  name: string;
  appliedAt: Date;
  appliedBy: string;
}

interface StepRecord extends AppliedStep {
  _id: ReturnType<typeof deterministicObjectId>;
}

export interface SchemaReport {
  server: ServerInfo;
  /** Steps recorded in the database, oldest first (after this run). */
  applied: AppliedStep[];
  /** Steps this run applied. */
  newlyApplied: string[];
  /** Refusals that stop the process from serving (MongoDB only), each with its fix. */
  problems: string[];
  /** What the stand-in does not do (logged, not fatal). */
  warnings: string[];
}

/** The schema is not what this version needs; the message names every index and its fix. */
export class SchemaError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`the database's indexes need attention: ${problems.join(' | ')}`);
    this.name = 'SchemaError';
    this.problems = problems;
  }
}

const stepId = (version: number) => deterministicObjectId('schema-step', String(version));

/** What went wrong with one index on MongoDB, and what the operator does about it. */
export function describeRefusal(refusal: IndexRefusal): string {
  const what = `index ${refusal.collection}.${refusal.index}`;
  const reason = refusal.codeName ? `${refusal.codeName} (${refusal.code})` : refusal.message;
  const guide = 'docs/deploy.md#schema-steps';
  switch (refusal.code) {
    case 85: // IndexOptionsConflict
    case 86: // IndexKeySpecsConflict
      return (
        `MongoDB refused ${what}: ${reason}: an index with this name or these keys exists with another definition. ` +
        `docgen does not redefine indexes silently: drop the existing one (db.${refusal.collection}.dropIndex("${refusal.index}")) ` +
        `and restart, or apply the schema step that changes it (${guide}).`
      );
    case 11000: // DuplicateKey during a unique build
      return (
        `MongoDB refused ${what}: ${reason}: the collection holds duplicates of a unique key, so the unique index cannot be built. ` +
        `Remove the duplicate documents (${refusal.message}), then restart (${guide}).`
      );
    default:
      if (isTimeout(refusal))
        return (
          `building ${what} outlasted DOCGEN_MONGODB_OPERATION_TIMEOUT_MS (a first build on a large collection); the server may still be building it. ` +
          `Let it finish (db.currentOp({"command.createIndexes": "${refusal.collection}"})) or run \`docgen migrate\`, which waits without a time-out; this process retries meanwhile (${guide}).`
        );
      return `MongoDB refused ${what}: ${reason}: ${refusal.message}. Fix the cause, then restart (${guide}).`;
  }
}

function isTimeout(refusal: IndexRefusal): boolean {
  const name = (refusal.cause as { name?: unknown } | null)?.name;
  return refusal.code === 50 || refusal.code === 89 || (typeof name === 'string' && /Timeout/.test(name));
}

/** Options the stand-in keeps in its definition but never acts on, or drops. */
function standInGaps(collection: string, declared: IndexDescription[], existing: Record<string, unknown>[]): string[] {
  const gaps: string[] = [];
  for (const index of declared) {
    const found = existing.find((e) => e.name === index.name);
    const label = `${collection}.${index.name}`;
    if (!found) {
      gaps.push(`${label}: missing`);
      continue;
    }
    if (index.unique) gaps.push(`${label}: unique, not enforced by the stand-in`);
    if (index.expireAfterSeconds !== undefined) gaps.push(`${label}: TTL, nothing expires on the stand-in`);
    if (index.partialFilterExpression && !found.partialFilterExpression)
      gaps.push(`${label}: the stand-in dropped its partial filter`);
  }
  return gaps;
}

export interface MigrateOptions {
  /** Who applies the steps (recorded), e.g. `docgen-api-render` or `docgen migrate`. */
  appliedBy: string;
  /** The steps (default INDEX_STEPS; tests pass their own). */
  steps?: readonly IndexStep[];
  now?: () => Date;
}

/**
 * Brings the database to the declared schema: creates the declared indexes, applies the drops
 * of steps not yet recorded, and records them. Idempotent and safe to run from every replica at
 * once (each step is recorded under a derived _id; creating an existing identical index is a
 * no-op; dropping a missing index is skipped).
 */
export async function migrateSchema(db: Db, options: MigrateOptions): Promise<SchemaReport> {
  const steps = options.steps ?? INDEX_STEPS;
  const now = options.now ?? (() => new Date());
  const server = await describeServer(db);
  const records = db.collection<StepRecord>(COLLECTIONS.schemaMigrations);
  const recorded = new Set((await records.find({}).toArray()).map((r) => r.version));

  const declared = declaredIndexes(steps);
  const refusals = await ensureIndexes(db, declared);
  const problems: string[] = [];
  const warnings: string[] = [];
  if (server.kind === 'mongodb') problems.push(...refusals.map(describeRefusal));
  else {
    warnings.push(...refusals.map((r) => `${r.collection}.${r.index}: refused by the stand-in (${r.message})`));
    for (const [collection, indexes] of Object.entries(declared)) {
      const existing = (await db.collection(collection).listIndexes().toArray()) as Record<string, unknown>[];
      warnings.push(...standInGaps(collection, indexes, existing));
    }
  }

  const newlyApplied: string[] = [];
  if (problems.length === 0) {
    for (const step of steps) {
      if (recorded.has(step.version)) continue;
      for (const [collection, names] of Object.entries(step.drop ?? {})) {
        for (const name of names) {
          await db
            .collection(collection)
            .dropIndex(name)
            .catch((err: unknown) => {
              // Already gone (another replica, or an operator, or never made: a fresh database
              // gets only the declared indexes): the step's aim holds. The stand-in says so
              // with code 86 and "index not found" (MongoDB: 27, "index not found with name").
              const code = (err as { code?: unknown }).code;
              if (code !== 27 && code !== 26 && !/index not found/i.test(String(err))) throw err;
            });
        }
      }
      const record: StepRecord = {
        _id: stepId(step.version),
        version: step.version,
        name: step.name,
        appliedAt: now(),
        appliedBy: options.appliedBy,
      };
      try {
        await records.insertOne(record);
        newlyApplied.push(`${step.version} ${step.name}`);
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err; // another replica recorded it first
      }
    }
  }
  const applied = (await records.find({}).sort({ version: 1 }).toArray()).map(
    ({ version, name, appliedAt, appliedBy }) => ({ version, name, appliedAt, appliedBy }),
  );
  return { server, applied, newlyApplied, problems, warnings };
}
