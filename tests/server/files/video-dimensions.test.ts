import crypto from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HEAD_BYTES, isAllowed } from '../../../server/modules/files/file-kind.ts';
import { DEFAULT_PROBE_LIMITS, isIsoBmffVideo, measureIsoBmffVideo } from '../../../server/modules/files/video-size.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';
import { isMatroskaVideo, measureMatroskaVideo } from '../../../server/modules/files/matroska-size.ts';
import { webmBytes } from './fixtures/webm.ts';
import { mp4Bytes, mp4Pieces, piecesSize, readPieces, type Mp4Spec, type Piece } from './fixtures/mp4.ts';

interface FileBody {
  actual_name: string;
  mime_type: string;
  width: number | null;
  height: number | null;
}

interface ListBody {
  files: FileBody[];
}

const VIDEO_640x360 = [{ width: 640, height: 360 }];

describe.each(DIALECTS)('video width and height of uploads on %s (spec §3)', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  afterEach(async () => t?.close());

  const whole = async (data: Buffer, name: string) => {
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: name }, file: { data } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.file as FileBody;
  };

  const listed = async (actualName: string) => {
    const res = await postJson(`${t.apiUrl}/api/v1/files/uploaded`, { token: user.token, pageSize: 100 });
    return (res.body as unknown as ListBody).files.find((f) => f.actual_name === actualName);
  };

  it('records the size of a faststart MP4 (moov first) sent whole, and lists it', async () => {
    t = await createHttpTestApp(dialect);
    user = await t.createUser();
    expect(isAllowed('video/mp4', await t.deps.settings.mimeTypes())).toBe(true);
    const data = mp4Bytes({ video: VIDEO_640x360, audio: true, mdatBytes: 4096 });
    expect(await fileTypeFromBuffer(data)).toEqual({ ext: 'mp4', mime: 'video/mp4' });

    const file = await whole(data, 'clip.mp4');
    expect(file).toMatchObject({ mime_type: 'video/mp4', width: 640, height: 360 });
    expect(await listed(file.actual_name)).toMatchObject({ mime_type: 'video/mp4', width: 640, height: 360 });
  });

  it('finds the moov after a 1.5 MiB mdat when the video arrives in chunks', async () => {
    const chunk = 256 * 1024;
    t = await createHttpTestApp(dialect, { chunkSize: chunk });
    user = await t.createUser();
    const data = mp4Bytes({ video: VIDEO_640x360, audio: true, mdatBytes: 1536 * 1024, moovAtEnd: true });
    expect(data.indexOf('moov', 0, 'latin1')).toBeGreaterThan(HEAD_BYTES);
    expect(await fileTypeFromBuffer(data)).toEqual({ ext: 'mp4', mime: 'video/mp4' });

    const uploadId = crypto.randomUUID();
    const totalChunks = Math.ceil(data.length / chunk);
    let last: Record<string, unknown> = {};
    for (let i = 0; i < totalChunks; i++) {
      const piece = data.subarray(i * chunk, (i + 1) * chunk);
      const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
        fields: { token: user.token, uploadId, originalname: 'phone.mp4', totalChunks, chunkIndex: i, fileSize: data.length, chunkHash: sha256(piece) },
        file: { data: piece },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      last = res.body;
    }
    const file = last.file as FileBody;
    expect(file).toMatchObject({ mime_type: 'video/mp4', width: 640, height: 360 });
    expect(await listed(file.actual_name)).toMatchObject({ width: 640, height: 360 });
  });

  it('records the size of a WebM and a Matroska video from their Tracks', async () => {
    // Chunks (and so S3 pieces) of 1 MiB, not the helper's 1 KiB: on S3 each 400 KiB file was 400
    // piece objects put and copied back together, 33 s of this test on moto.
    t = await createHttpTestApp(dialect, { chunkSize: 1024 * 1024 });
    user = await t.createUser();
    for (const [docType, mime] of [['webm', 'video/webm'], ['matroska', 'video/matroska']] as const) {
      const data = webmBytes({ docType, video: [{ width: 1280, height: 720 }], clusterBytes: 400 * 1024 });
      expect((await fileTypeFromBuffer(data))?.mime).toBe(mime);
      const file = await whole(data, `recording.${docType === 'webm' ? 'webm' : 'mkv'}`);
      expect(file).toMatchObject({ mime_type: mime, width: 1280, height: 720 });
      expect(await listed(file.actual_name)).toMatchObject({ width: 1280, height: 720 });
    }
  });

  it('keeps a broken MP4 (a valid ftyp, then junk or a cut-off moov) with no size', async () => {
    t = await createHttpTestApp(dialect);
    user = await t.createUser();
    const good = mp4Bytes({ video: VIDEO_640x360, mdatBytes: 1024 });
    const ftyp = good.subarray(0, good.readUInt32BE(0));
    const junk = Buffer.concat([ftyp, Buffer.alloc(5000, 0xff)]);
    const cut = good.subarray(0, ftyp.length + 200);
    for (const [data, name] of [[junk, 'junk.mp4'], [cut, 'cut.mp4']] as const) {
      expect((await fileTypeFromBuffer(data))?.mime).toBe('video/mp4');
      const file = await whole(data, name);
      expect(file).toMatchObject({ mime_type: 'video/mp4', width: null, height: null });
      expect(await listed(file.actual_name)).toMatchObject({ width: null, height: null });
    }
  });
});

/** A file given as pieces (zero runs never allocated), with a reader that counts what it reads. */
function sparseFile(pieces: Piece[]) {
  const size = piecesSize(pieces);
  const counted = { reads: 0, bytes: 0 };
  const head = readPieces(pieces, 0, Math.min(size, HEAD_BYTES));
  const read = async (start: number, end: number) => {
    counted.reads += 1;
    counted.bytes += end - start;
    return readPieces(pieces, start, end);
  };
  return { size, head, read, counted };
}

const measure = (spec: Mp4Spec) => {
  const file = sparseFile(mp4Pieces(spec));
  return measureIsoBmffVideo(file).then((dims) => ({ dims, ...file }));
};

describe('measureIsoBmffVideo (video-size.ts)', () => {
  it('measures a 50 MiB moov-at-end file reading less than 1 MiB, head included', async () => {
    const { dims, size, counted } = await measure({ video: VIDEO_640x360, audio: true, mdatBytes: 50 * 1024 * 1024, moovAtEnd: true });
    expect(size).toBeGreaterThan(50 * 1024 * 1024);
    expect(dims).toEqual({ width: 640, height: 360 });
    // One read past the mdat fetches the whole moov.
    expect(counted.reads).toBe(1);
    expect(HEAD_BYTES + counted.bytes).toBeLessThan(1024 * 1024);
  });

  it('steps over a 5 GiB mdat written with a 64-bit size', async () => {
    const { dims, counted } = await measure({ video: VIDEO_640x360, mdatBytes: 5 * 1024 ** 3, moovAtEnd: true });
    expect(dims).toEqual({ width: 640, height: 360 });
    expect(counted.reads).toBe(1);
  });

  it('needs nothing past the head when the moov comes first', async () => {
    const { dims, counted } = await measure({ video: VIDEO_640x360, mdatBytes: 20 * 1024 * 1024 });
    expect(dims).toEqual({ width: 640, height: 360 });
    expect(counted.reads).toBe(0);
  });

  it('answers the display size: tkhd over the coded size, coded when tkhd is 0×0, swapped by a quarter turn', async () => {
    const anamorphic = await measure({ video: [{ width: 720, height: 576, display: { width: 1024, height: 576 } }], mdatBytes: 10 });
    expect(anamorphic.dims).toEqual({ width: 1024, height: 576 });
    const emptyHeader = await measure({ video: [{ width: 320, height: 240, display: { width: 0, height: 0 } }], mdatBytes: 10 });
    expect(emptyHeader.dims).toEqual({ width: 320, height: 240 });
    const upright = await measure({ video: [{ width: 1920, height: 1080, quarterTurn: true }], mdatBytes: 10 });
    expect(upright.dims).toEqual({ width: 1080, height: 1920 });
  });

  it('takes the largest video track, not a thumbnail track listed first, and ignores audio', async () => {
    const { dims } = await measure({ video: [{ width: 160, height: 90 }, { width: 1280, height: 720 }], audio: true, mdatBytes: 10 });
    expect(dims).toEqual({ width: 1280, height: 720 });
    const audioOnly = sparseFile(mp4Pieces({ video: [], audio: true, mdatBytes: 10 }));
    expect(await measureIsoBmffVideo(audioOnly)).toBeNull();
  });

  it('reads a 3 MiB moov (a long video\'s sample tables) in a handful of growing reads', async () => {
    const { dims, counted } = await measure({ video: VIDEO_640x360, mdatBytes: 50 * 1024 * 1024, moovAtEnd: true, moovPadding: 3 * 1024 * 1024 });
    expect(dims).toEqual({ width: 640, height: 360 });
    expect(counted.reads).toBeLessThanOrEqual(8);
    expect(counted.bytes).toBeLessThan(4 * 1024 * 1024);
  });

  it('gives up within the budget on a moov that claims 100 MiB', async () => {
    const good = mp4Pieces({ video: VIDEO_640x360, mdatBytes: 1024 * 1024 });
    const ftyp = good[0] as Buffer;
    const hugeMoov = Buffer.alloc(16);
    hugeMoov.writeUInt32BE(100 * 1024 * 1024 + 16, 0);
    hugeMoov.write('moov', 4, 'latin1');
    const file = sparseFile([ftyp, ...good.slice(2), hugeMoov, 100 * 1024 * 1024]);
    expect(await measureIsoBmffVideo(file)).toBeNull();
    expect(file.counted.bytes).toBeLessThanOrEqual(DEFAULT_PROBE_LIMITS.maxBytes);
    expect(file.counted.reads).toBeLessThanOrEqual(DEFAULT_PROBE_LIMITS.maxReads);
  });

  it('answers null, silently, for junk after the ftyp, a cut-off file and a failing reader', async () => {
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => vi.spyOn(console, m).mockImplementation(() => {}));
    try {
      const good = mp4Bytes({ video: VIDEO_640x360, mdatBytes: 1024 * 1024, moovAtEnd: true });
      const ftyp = good.subarray(0, good.readUInt32BE(0));
      const junk = sparseFile([ftyp, Buffer.alloc(300_000, 0xa5), Buffer.alloc(1000, 0xff)]);
      expect(await measureIsoBmffVideo(junk)).toBeNull();
      const cut = sparseFile([good.subarray(0, good.length - 100)]);
      expect(await measureIsoBmffVideo(cut)).toBeNull();
      const failing = { ...sparseFile([good]), read: () => Promise.reject(new Error('disk gone')) };
      expect(await measureIsoBmffVideo(failing)).toBeNull();
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('covers the ISO-BMFF video types file-type reports, not WebM, Matroska or AVI', () => {
    for (const mime of ['video/mp4', 'video/quicktime', 'video/x-m4v', 'video/3gpp', 'video/3gpp2']) expect(isIsoBmffVideo(mime)).toBe(true);
    for (const mime of ['video/webm', 'video/x-matroska', 'video/vnd.avi', 'audio/mp4', 'image/heic']) expect(isIsoBmffVideo(mime)).toBe(false);
  });
});

describe('measureMatroskaVideo (matroska-size.ts)', () => {
  it('reads the largest video track from a head that ends inside the media', async () => {
    const data = webmBytes({ video: [{ width: 320, height: 180 }, { width: 1920, height: 1080 }], clusterBytes: 2 * HEAD_BYTES });
    const head = data.subarray(0, HEAD_BYTES);
    expect(await measureMatroskaVideo(head, 'video/webm', data.length)).toEqual({ width: 1920, height: 1080 });
  });

  it('answers null for a file with no video track, a cut-off header and junk', async () => {
    const audioOnly = webmBytes({ video: [] });
    expect(await measureMatroskaVideo(audioOnly, 'video/webm', audioOnly.length)).toBeNull();
    const whole = webmBytes({ video: [{ width: 640, height: 480 }] });
    expect(await measureMatroskaVideo(whole.subarray(0, 60), 'video/webm', whole.length)).toBeNull();
    const junk = Buffer.concat([whole.subarray(0, 40), Buffer.alloc(2000, 0xff)]);
    expect(await measureMatroskaVideo(junk, 'video/webm', junk.length)).toBeNull();
  });

  it('covers WebM and Matroska only', () => {
    for (const mime of ['video/webm', 'video/matroska', 'video/x-matroska']) expect(isMatroskaVideo(mime)).toBe(true);
    for (const mime of ['video/mp4', 'audio/webm', 'video/vnd.avi']) expect(isMatroskaVideo(mime)).toBe(false);
  });
});
