import { CopyLink } from '../../components/copy-link.tsx';
import { FileThumb } from '../../components/file-thumb.tsx';
import { ShareButton } from '../../components/share-button.tsx';
import type { UploadItem } from '../../upload/uploader.ts';

/**
 * Issue 11 item 8: what a finished upload row offers — a thumbnail (the picture just picked on
 * this device, else the kind's icon), the link that copies on click (spec §4) and Share.
 */
export function FinishedActions({ item, link, pictureOf }: { item: UploadItem; link: string; pictureOf?: (name: string, size: number) => string | null }) {
  return (
    <>
      <FileThumb file={{ mime_type: item.type, original_name: item.name }} sizes="3.5rem" localSrc={pictureOf?.(item.name, item.size)} className="file-thumb-small" />
      <CopyLink url={link} className="upload-link" />
      <ShareButton url={link} title={item.name} ariaLabel={`Share ${item.name}`} />
    </>
  );
}
