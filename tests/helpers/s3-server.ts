import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client, type S3Settings } from '../../server/storage/s3.ts';
import { freePort } from './free-port.ts';

/**
 * The S3-compatible server the tests run against (README "Tests"): moto's `moto_server`,
 * the most faithful one these machines have (issue 10). `TEST_S3_ENDPOINT` points at one that
 * is already running (`.ci/run` starts one); otherwise each test file starts its own on a
 * free loopback port when `moto_server` is on PATH. Without either, S3 variants are skipped
 * with a loud message — `.ci/run` refuses to run without one.
 */
export const S3_ACCESS_KEY = 'stash-test';
export const S3_SECRET_KEY = 'stash-test-secret';

function onPath(binary: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, binary), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Whether S3 variants can run here (known before any test starts, for `describe.skipIf`). */
export const S3_AVAILABLE = Boolean(process.env.TEST_S3_ENDPOINT) || onPath('moto_server');

let warned = false;
/** Call where S3 variants are skipped: says so loudly, once per test file. */
export function warnS3Skipped(): void {
  if (S3_AVAILABLE || warned) return;
  warned = true;
  console.warn('\n!!! S3 variants SKIPPED: TEST_S3_ENDPOINT is unset and moto_server is not on PATH (see README "Tests").\n');
}

let server: { endpoint: string; child: ChildProcess | null } | null = null;
let starting: Promise<string> | null = null;

/** The endpoint of a running S3-compatible server, starting moto on loopback if needed. */
export function s3Endpoint(): Promise<string> {
  if (process.env.TEST_S3_ENDPOINT) return Promise.resolve(process.env.TEST_S3_ENDPOINT);
  if (server) return Promise.resolve(server.endpoint);
  if (!S3_AVAILABLE) return Promise.reject(new Error('An S3 test needs TEST_S3_ENDPOINT or moto_server on PATH (README "Tests").'));
  starting ??= startMoto();
  return starting;
}

async function startMoto(): Promise<string> {
  const port = await freePort();
  // A shell minder stops moto when this test process is gone, however it ends: vitest may kill
  // its workers without running exit handlers, and a moto left behind would hold memory forever.
  const minder = `moto_server -H 127.0.0.1 -p ${port} & m=$!; trap 'kill $m 2>/dev/null' EXIT TERM INT; while kill -0 ${process.pid} 2>/dev/null && kill -0 $m 2>/dev/null; do sleep 1; done`;
  const child = spawn('sh', ['-c', minder], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  process.once('exit', () => child.kill('SIGTERM'));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}: ${stderr}`);
    try {
      const res = await fetch(`${endpoint}/`);
      await res.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`moto_server did not answer on ${endpoint} within 30 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  server = { endpoint, child };
  return endpoint;
}

/** Stops the moto this file started (if any). */
export async function stopS3Server(): Promise<void> {
  const child = server?.child;
  server = null;
  starting = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

export function s3Settings(endpoint: string, bucket: string): S3Settings {
  return { endpoint, region: 'us-east-1', bucket, accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY, forcePathStyle: true };
}

/** The environment that makes a server process use `bucket` on the test store. */
export function s3Env(endpoint: string, bucket: string): Record<string, string> {
  return {
    STORAGE_DRIVER: 's3',
    S3_ENDPOINT: endpoint,
    S3_REGION: 'us-east-1',
    S3_BUCKET: bucket,
    S3_ACCESS_KEY_ID: S3_ACCESS_KEY,
    S3_SECRET_ACCESS_KEY: S3_SECRET_KEY,
    S3_FORCE_PATH_STYLE: 'true',
  };
}

/** A fresh, empty bucket (one per test app, style habit 9) and a function that removes it. */
export async function createTestBucket(endpoint: string): Promise<{ bucket: string; client: S3Client; drop(): Promise<void> }> {
  const bucket = `stash-${crypto.randomBytes(6).toString('hex')}`;
  const client = createS3Client(s3Settings(endpoint, bucket));
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    bucket,
    client,
    async drop() {
      for (;;) {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
        const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
        if (keys.length === 0) break;
        await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
      }
      await client.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => {});
      client.destroy();
    },
  };
}
