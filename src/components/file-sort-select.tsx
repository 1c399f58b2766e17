import type { FileSort } from '../../contract/files.ts';

export type FileSortValue = NonNullable<FileSort>;

/** Spec §9's four file sorts, the same for the user's own list and the admin's All files. */
export const FILE_SORTS: { value: FileSortValue; label: string }[] = [
  { value: 'newest', label: 'Newest' },
  { value: 'oldest', label: 'Oldest' },
  { value: 'largest', label: 'Largest' },
  { value: 'smallest', label: 'Smallest' },
];

export function FileSortSelect({ id, value, onChange }: { id?: string; value: FileSortValue; onChange: (sort: FileSortValue) => void }) {
  return (
    <select id={id} className="input" value={value} onChange={(e) => onChange(e.target.value as FileSortValue)}>
      {FILE_SORTS.map((s) => (
        <option key={s.value} value={s.value}>
          {s.label}
        </option>
      ))}
    </select>
  );
}
