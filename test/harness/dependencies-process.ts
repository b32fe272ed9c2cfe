// The MongoDB stand-in and the S3 stand-in in a process of their own, as a deployment has its
// database and object store elsewhere. Run as `node test/harness/dependencies-process.ts`; it
// prints one JSON line with what startMongo() and startS3() gave, and stops both on SIGTERM.
// Why: both are single-threaded JavaScript servers. In the test process they share one event
// loop with the API role and the test itself, so every database call of a render waits behind
// whatever else that process does (test/e2e/fair-share.test.ts measures latency under load).
import { startMongo, startS3 } from './dependencies.ts';

const [mongo, s3] = await Promise.all([startMongo(), startS3()]);
process.stdout.write(
  `${JSON.stringify({
    mongo: { url: mongo.url, database: mongo.database, kind: mongo.kind },
    s3: {
      endpoint: s3.endpoint,
      host: s3.host,
      port: s3.port,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      region: s3.region,
      directory: s3.directory,
      bucket: s3.bucket,
    },
  })}\n`,
);
process.once('SIGTERM', () => {
  void Promise.allSettled([mongo.stop(), s3.stop()]).then(() => process.exit(0));
});
