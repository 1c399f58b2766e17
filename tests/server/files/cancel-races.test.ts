import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../helpers/poll.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, sha256, type HttpAnswer, type HttpTestApp } from '../../helpers/upload.ts';

/**
 * A client's Cancel can land at any moment of its own upload: while a chunk streams, while a cut
 * chunk is resumed (its kept bytes read back from the store), while the last chunk lists the
 * file. Each round uploads a file of three chunks the way the app does after a dropped
 * connection (chunk 1 cut, status, the rest from the offset) and cancels it at a random moment
 * of the time a whole upload took (round 0). Whatever the order, no request answers 5xx, and
 * the file is either listed whole (the cancel came too late: 409 or 404) or not at all, with no
 * bytes left in the store. It found a 503 "unavailable" on S3 (a piece of a resumed chunk's kept
 * bytes deleted by the cancel between the read's listing and its GET; server/README.md "One writer
 * per chunk").
 * CANCEL_RACE_ROUNDS sets the rounds (8).
 */
const CHUNK = 64 * 1024;
const ROUNDS = Number(process.env.CANCEL_RACE_ROUNDS ?? 8);

describe.each(DIALECTS)('a cancel at any moment of an upload on %s', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  afterEach(async () => t?.close());

  it('never answers 5xx, and leaves either the file listed whole or nothing at all', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, s3PieceSize: 8 * 1024 });
    user = await t.createUser();
    const answers: { what: string; status: number; error?: unknown }[] = [];
    let took = 0;
    for (let round = 0; round <= ROUNDS; round++) {
      const uploadId = crypto.randomUUID();
      const name = `race-${round}.bin`;
      const data = randomBytes(CHUNK * 2 + 5_000);
      const chunk = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
      const send = async (what: string, i: number, from = 0, cutAt?: number): Promise<HttpAnswer> => {
        const answer = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
          fields: { token: user.token, uploadId, originalname: name, totalChunks: 3, chunkIndex: i, fileSize: data.length, chunkHash: sha256(chunk(i)), ...(from > 0 ? { chunkOffset: from } : {}) },
          file: { data: chunk(i).subarray(from), filename: 'blob' },
          abortAfter: cutAt,
          beforeCut: () => new Promise((r) => setTimeout(r, 20)),
        }).catch((): HttpAnswer => ({ status: 0, body: {} }));
        answers.push({ what, status: answer.status, error: answer.body.error });
        return answer;
      };
      const began = Date.now();
      const client = (async () => {
        if ((await send('chunk 0', 0)).status !== 200) return;
        await send('chunk 1, cut', 1, 0, 20_000 + ((round * 3_000) % 40_000));
        const st = await postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token: user.token, uploadId });
        answers.push({ what: 'status', status: st.status, error: st.body.error });
        if (st.status !== 200) return;
        const kept = (st.body.partial as { bytes: number } | null)?.bytes ?? 0;
        if ((await send('chunk 1, the rest', 1, kept)).status !== 200) return;
        await send('chunk 2', 2);
      })();
      const cancel = (async (): Promise<HttpAnswer | null> => {
        if (round === 0) {
          await client;
          took = Date.now() - began;
          return null;
        }
        await new Promise((r) => setTimeout(r, Math.random() * took * 1.1));
        const answer = await postJson(`${t.apiUrl}/api/v1/files/upload/cancel`, { token: user.token, uploadId });
        answers.push({ what: 'cancel', status: answer.status, error: answer.body.error });
        return answer;
      })();
      const [, cancelled] = await Promise.all([client, cancel]);
      expect(answers.filter((a) => a.status >= 500), `round ${round}: ${JSON.stringify(answers.slice(-6))}`).toEqual([]);
      const listed = await t.deps.db.selectFrom('files').select('actual_name').where('user_id', '=', user.id).where('original_name', '=', name).execute();
      if (cancelled?.status === 200) {
        expect(listed, `round ${round}: cancelled, yet listed`).toEqual([]);
      } else {
        expect(listed.length, `round ${round}: cancel answered ${JSON.stringify(cancelled)}`).toBeLessThanOrEqual(1);
        if (cancelled === null) expect(listed).toHaveLength(1);
        for (const file of listed) {
          const res = await fetch(`${t.filesUrl}/${file.actual_name}`);
          expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(data));
        }
      }
    }
    // A cut request may still be settling its bytes when its round ends; then they go.
    await until(() => t.store.partialKeys(), (keys) => keys.length === 0);
  }, 300_000);
});
