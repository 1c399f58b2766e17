import { useEffect, useState } from 'react';

/**
 * Object URLs of pictures picked on this device, so a just-finished upload shows its thumbnail
 * at once (the server's previews may still be in the making). Keyed by name and size, which is
 * what both an upload row and a File object carry. Revoked when the dashboard goes away.
 */
export interface LocalPictures {
  remember(files: File[]): void;
  pictureOf(name: string, size: number): string | null;
}

export function useLocalPictures(): LocalPictures {
  const [store] = useState(() => {
    const urls = new Map<string, string>();
    return {
      urls,
      remember(files: File[]) {
        for (const f of files) {
          const key = `${f.name}|${f.size}`;
          if (typeof URL.createObjectURL === 'function' && f.type.startsWith('image/') && f.type !== 'image/svg+xml' && !urls.has(key)) urls.set(key, URL.createObjectURL(f));
        }
      },
      pictureOf: (name: string, size: number): string | null => urls.get(`${name}|${size}`) ?? null,
    };
  });
  useEffect(
    () => () => {
      for (const u of store.urls.values()) URL.revokeObjectURL(u);
      store.urls.clear();
    },
    [store],
  );
  return store;
}

/** Phones and tablets have no drag and drop to speak of: they pick photos and files instead. */
export function isTouchDevice(): boolean {
  return typeof window.matchMedia === 'function' && window.matchMedia('(pointer: coarse)').matches;
}
