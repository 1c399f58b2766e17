import type { UploadItem } from './uploader.ts';

export interface WorkerInit {
  apiUrl: string;
  token: string | null;
  chunkSize: number;
}

/**
 * What src/upload/worker/upload.worker.ts exposes through comlink. Declared here, apart from the
 * worker, so the page can type its bridge without pulling the worker's runtime (webworker lib)
 * into the DOM program.
 */
export interface UploadWorkerApi {
  /** Resolves true when uploads can be kept in IndexedDB (false: memory only, lost on reload). */
  init(options: WorkerInit): Promise<boolean>;
  setToken(token: string | null): Promise<void>;
  /** The page's session check named the user behind `token` (src/upload/queue/account.ts). */
  signedInAs(token: string, owner: string): Promise<void>;
  enqueue(files: File[]): Promise<UploadItem[]>;
  list(): Promise<UploadItem[]>;
  /** Returns a subscription id for unsubscribe (a function cannot come back over comlink). */
  subscribe(listener: (items: UploadItem[]) => void): number;
  unsubscribe(id: number): void;
  pause(id: string): Promise<void>;
  resume(id: string): Promise<void>;
  cancel(id: string): Promise<void>;
  undoCancel(id: string): Promise<void>;
  chooseAgain(id: string, file: File): Promise<void>;
  /** Keeps (or drops) the signed-in user's uploads and forgets the token. */
  signOut(keep: boolean): Promise<void>;
  retry(id: string): Promise<void>;
  clearFinished(): Promise<void>;
  wake(): void;
}
