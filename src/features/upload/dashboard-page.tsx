import { useEffect, useMemo, useRef, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import type { utilsFileSize } from '../../../contract/utils.ts';
import { call } from '../../lib/api-client.ts';
import { formatMaxFileSize } from '../../lib/format.ts';
import { getUploader } from '../../upload/page/instance.ts';
import { UploadList } from './upload-list.tsx';
import { UrlUpload } from './url-upload.tsx';
import { useUploads } from './use-uploads.ts';
import './upload.css';

/** Spec §2 /dashboard: the File Uploader. */
export function DashboardPage() {
  const uploader = useMemo(() => getUploader(), []);
  const items = useUploads(uploader);
  const [maxSize, setMaxSize] = useState<number | null>(null);
  const [showUrl, setShowUrl] = useState(false);
  const [dragging, setDragging] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const [params] = useSearchParams();
  const shared = params.get('shared') === '1';

  useEffect(() => {
    call<typeof utilsFileSize>('/api/v1/utils/filesize', {})
      .then((r) => setMaxSize(r.maxFileSize))
      .catch((err: unknown) => console.error('Could not load the maximum file size', err)); // spec §8: only logged
  }, []);

  // Spec §2 paste support: files on the clipboard anywhere on the page join the queue.
  useEffect(() => {
    function onPaste(e: ClipboardEvent) {
      const target = e.target as HTMLElement | null;
      const files = [...(e.clipboardData?.files ?? [])];
      if (files.length === 0) return; // text pasted into a field stays text
      if (target?.tagName === 'INPUT' && (target as HTMLInputElement).type !== 'file') return;
      e.preventDefault();
      void uploader.enqueue(files);
    }
    document.addEventListener('paste', onPaste);
    return () => document.removeEventListener('paste', onPaste);
  }, [uploader]);

  function add(list: FileList | null) {
    const files = [...(list ?? [])];
    if (files.length > 0) void uploader.enqueue(files);
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
        <p className="hint max-size">Maximum file size: {maxSize === null ? '…' : formatMaxFileSize(maxSize)}</p>
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
          <p>Drag and drop files here, paste them, or</p>
          <button type="button" className="btn btn-primary" onClick={() => inputRef.current?.click()}>
            Choose files
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
      <UploadList items={items} uploader={uploader} />
    </div>
  );
}
