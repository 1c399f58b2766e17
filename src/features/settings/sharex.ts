/** Spec §5: the ShareX download needs a key. */
export const MSG_NO_API_KEY = 'Please generate an API key first.';

export interface SharexConfig {
  Version: string;
  Name: string;
  DestinationType: string;
  RequestMethod: 'POST';
  RequestURL: string;
  Headers: { Authorization: string };
  Body: 'MultipartFormData';
  FileFormName: 'file';
  URL: string;
  ErrorMessage: string;
}

/**
 * A ShareX custom uploader: one multipart request per file with the key as a Bearer header
 * (design §5/§6: API keys authenticate single-request uploads), the link read from `url` and
 * failures from `error` of the JSON answer.
 */
export function buildSharexConfig(apiUrl: string, key: string, siteName: string): SharexConfig {
  return {
    Version: '17.0.0',
    Name: siteName,
    DestinationType: 'ImageUploader, FileUploader, TextUploader',
    RequestMethod: 'POST',
    RequestURL: `${apiUrl.replace(/\/+$/, '')}/api/v1/files/upload`,
    Headers: { Authorization: `Bearer ${key}` },
    Body: 'MultipartFormData',
    FileFormName: 'file',
    URL: '{json:url}',
    ErrorMessage: '{json:error}',
  };
}

export function sharexFileName(siteName: string): string {
  return `${siteName.replace(/[^A-Za-z0-9._-]+/g, '-') || 'stash'}.sxcu`;
}

/** Saves the config through a Blob link, so the key never leaves the browser. */
export function downloadSharexConfig(config: SharexConfig, fileName: string): void {
  const blob = new Blob([JSON.stringify(config, null, 2)], { type: 'application/json' });
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 0);
}
