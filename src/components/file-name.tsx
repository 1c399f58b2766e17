import { shortName } from '../lib/format.ts';

/** A file's name as a list shows it (`shortName`, `shown` characters); a screen reader still hears the whole name. */
export function FileName({ name, shown: max }: { name: string; shown?: number }) {
  const shown = shortName(name, max);
  if (shown === name) return <>{name}</>;
  return (
    <>
      <span aria-hidden="true">{shown}</span>
      <span className="visually-hidden">{name}</span>
    </>
  );
}
