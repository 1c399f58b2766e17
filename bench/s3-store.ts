import { createTestBucket, s3Endpoint, s3Env, S3_AVAILABLE, stopS3Server } from '../tests/helpers/s3-server.ts';
import { login, startServer, type BenchServer } from './server-process.ts';
import { options } from './options.ts';

export interface S3Bench {
  server: BenchServer;
  token: string;
  /** The server's store settings (s3Env), for another process on the same bucket. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A second Stash server with `STORAGE_DRIVER=s3` (README "Deployment at scale") on a fresh bucket
 * of a moto_server started on loopback by the tests' harness (or `TEST_S3_ENDPOINT`), so the S3
 * rows sit beside the local-disk rows of the same run (issue 10). Resolves with why not, instead,
 * when no S3 server can run here: the rows then say so rather than show a number.
 */
export async function startS3Bench(): Promise<S3Bench | string> {
  // moto ingests at ~20 MiB/s here: its rounds alone took a quarter of --quick's three minutes.
  if (options.quick) return 'skipped in --quick (moto ingests slowly; the full run has these rows)';
  if (!S3_AVAILABLE) return 'moto_server not on PATH (pip install "moto[server]") and TEST_S3_ENDPOINT unset';
  const endpoint = await s3Endpoint();
  const bucket = await createTestBucket(endpoint);
  const env = s3Env(endpoint, bucket.bucket);
  const server = await startServer(env);
  return {
    server,
    env,
    token: await login(server.apiUrl),
    async stop() {
      await server.stop();
      await bucket.drop();
      await stopS3Server();
    },
  };
}
