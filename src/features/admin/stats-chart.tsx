import { useId } from 'react';
import { formatBytes } from '../../lib/format.ts';

interface Bucket {
  count: number;
  size: number;
}

const KINDS = [
  { key: 'photos', label: 'Photos' },
  { key: 'videos', label: 'Videos' },
  { key: 'others', label: 'Others' },
] as const;

type Buckets = Record<(typeof KINDS)[number]['key'], Bucket>;

/**
 * Photos, videos and others as CSS bars, one chart for counts and one for sizes. Each bar's
 * width is only decoration: the numbers are written beside it, and the list is what a screen
 * reader reads, so no information lives in the drawing alone.
 */
export function StatsChart({ stats }: { stats: Buckets }) {
  const id = useId();
  const charts = [
    { title: 'Files by kind', value: (b: Bucket) => b.count, text: (b: Bucket) => String(b.count) },
    { title: 'Storage by kind', value: (b: Bucket) => b.size, text: (b: Bucket) => formatBytes(b.size) },
  ];
  return (
    <div className="admin-charts">
      {charts.map((chart, n) => {
        const max = Math.max(...KINDS.map((k) => chart.value(stats[k.key])), 0);
        return (
          <figure key={chart.title} className="admin-chart" aria-labelledby={`${id}-${n}`}>
            <figcaption id={`${id}-${n}`}>{chart.title}</figcaption>
            <ul>
              {KINDS.map((k) => {
                const v = chart.value(stats[k.key]);
                const pct = max > 0 ? Math.round((v / max) * 100) : 0;
                return (
                  <li key={k.key} className="admin-bar-row">
                    <span className="admin-bar-label">{k.label}</span>
                    <span className="admin-bar-track" aria-hidden="true">
                      <span className={`admin-bar admin-bar-${k.key}`} style={{ width: `${pct}%` }} />
                    </span>
                    <span className="admin-bar-value">{chart.text(stats[k.key])}</span>
                  </li>
                );
              })}
            </ul>
          </figure>
        );
      })}
    </div>
  );
}
