import { useEffect, useMemo, useRef, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import type { utilsFileSize } from '../../../contract/utils.ts';
import { call } from '../../lib/api-client.ts';
import { formatMaxFileSize } from '../../lib/format.ts';
import { getUploader } from '../../upload/page/instance.ts';
import { isTouchDevice, useLocalPictures } from './local-pictures.ts';
import { RecentUploads } from './recent-uploads.tsx';
import { UploadList } from './upload-list.tsx';
import { UrlUpload } from './url-upload.tsx';
import { useUploads } from './use-uploads.ts';
import './upload.css';

/** Spec §2 /dashboard: the File Uploader. */
export function DashboardPage() {
  const uploader = useMemo(() => getUploader(), []);
  const items = useUploads(uploader);
  // null while asking; 'unknown' after a failure: spec §8 only logs it, and the label is left
  // out rather than stuck on '…' (issue 11 item 12). Asked again when the connection returns.
  const [maxSize, setMaxSize] = useState<number | null | 'unknown'>(null);
  const pictures = useLocalPictures();
  const [touch] = useState(isTouchDevice);
  const finished = items.filter((i) => i.state === 'done').length;
  const [showUrl, setShowUrl] = useState(false);
  const [dragging, setDragging] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const [params] = useSearchParams();
  const shared = params.get('shared') === '1';

  useEffect(() => {
    let live = true;
    const ask = () =>
      call<typeof utilsFileSize>('/api/v1/utils/filesize', {})
        .then((r) => live && setMaxSize(r.maxFileSize))
        .catch((err: unknown) => {
          console.error('Could not load the maximum file size', err); // spec §8: only logged
          if (live) setMaxSize((m) => (typeof m === 'number' ? m : 'unknown'));
        });
    void ask();
    window.addEventListener('online', ask);
    return () => {
      live = false;
      window.removeEventListener('online', ask);
    };
  }, []);

  // Spec §2 paste support: files on the clipboard anywhere on the page join the queue.
  useEffect(() => {
    function onPaste(e: ClipboardEvent) {
      const target = e.target as HTMLElement | null;
      const files = [...(e.clipboardData?.files ?? [])];
      if (files.length === 0) return; // text pasted into a field stays text
      if (target?.tagName === 'INPUT' && (target as HTMLInputElement).type !== 'file') return;
      e.preventDefault();
      pictures.remember(files);
      void uploader.enqueue(files);
    }
    document.addEventListener('paste', onPaste);
    return () => document.removeEventListener('paste', onPaste);
  }, [uploader, pictures]);

  function add(list: FileList | null) {
    const files = [...(list ?? [])];
    if (files.length === 0) return;
    pictures.remember(files);
    void uploader.enqueue(files);
  }

  return (
    <div className="dashboard">
      <h1 className="page-title">File Uploader</h1>
      {shared && (
        <p className="banner banner-success" role="status">
          The files you shared to this app are in the upload list below.
        </p>
      )}
      <section className="card" aria-labelledby="uploader-title">
        <h2 id="uploader-title" className="visually-hidden">
          Upload files
        </h2>
        {maxSize !== 'unknown' && <p className="hint max-size">Maximum file size: {maxSize === null ? '…' : formatMaxFileSize(maxSize)}</p>}
        <div
          className={`dropzone${dragging ? ' dragging' : ''}`}
          data-testid="dropzone"
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            add(e.dataTransfer.files);
          }}
        >
          {/* A phone has no drag and drop: it picks from the photo library and files (issue 11 item 8). */}
          <p>{touch ? 'Photos, videos and any other file, several at once.' : 'Drag and drop files here, paste them, or'}</p>
          <button type="button" className="btn btn-primary btn-large" onClick={() => inputRef.current?.click()}>
            {touch ? 'Choose photos & files' : 'Choose files'}
          </button>
          <input
            ref={inputRef}
            id="file-picker"
            type="file"
            multiple
            className="visually-hidden"
            aria-label="Choose files to upload"
            tabIndex={-1}
            onChange={(e) => {
              add(e.target.files);
              e.target.value = ''; // picking the same file again still fires
            }}
          />
        </div>
        <button type="button" className="btn-link url-toggle" aria-expanded={showUrl} aria-controls="url-upload-panel" onClick={() => setShowUrl((s) => !s)}>
          Upload via URL
        </button>
        {showUrl && (
          <div id="url-upload-panel">
            <UrlUpload />
          </div>
        )}
      </section>
      <UploadList items={items} uploader={uploader} pictureOf={pictures.pictureOf} />
      <RecentUploads refreshKey={finished} localPicture={pictures.pictureOf} />
    </div>
  );
}
