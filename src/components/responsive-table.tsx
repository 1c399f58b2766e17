import type { ReactNode } from 'react';
import './responsive-table.css';

export interface Column<T> {
  key: string;
  header: string;
  render: (row: T) => ReactNode;
  /** A value read as one piece (a date, a size, a badge): never wrapped inside the table. */
  nowrap?: boolean;
}

/** Columns past this many stack into cards in a wider box (responsive-table.css, `rtable-many`). */
const MANY_COLUMNS = 6;

interface Props<T> {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  empty?: string;
  caption?: string;
}

/**
 * A real table where it has room; where its box is under 720 px (960 with more than six
 * columns) each row becomes a card whose
 * cells carry their header as a label (responsive-table.css), so nothing scrolls sideways at
 * 360 px (issue 4). The box, not the screen, decides: a phone in landscape shows the admin
 * sidebar, and eight columns in the ~590 px beside it broke every word letter by letter.
 */
export function ResponsiveTable<T>({ columns, rows, rowKey, empty = 'Nothing to show.', caption }: Props<T>) {
  if (rows.length === 0) return <p className="table-empty">{empty}</p>;
  return (
    <div className={columns.length > MANY_COLUMNS ? 'rtable-box rtable-many' : 'rtable-box'}>
      <table className="rtable">
        {caption && <caption className="visually-hidden">{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col">
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.key} data-label={c.header} className={c.nowrap ? 'rtable-nowrap' : undefined}>
                  {c.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
