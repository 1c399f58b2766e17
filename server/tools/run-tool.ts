import { ToolUsageError } from './instance.ts';

interface Closable {
  close(): Promise<void>;
}

/**
 * Runs an operator command (migrate, backup, restore): `body` returns the exit code and pushes
 * what it opens onto `opened`, which is closed whatever happens. A ToolUsageError is one line
 * and exit 2; anything else is printed whole and exit 1.
 */
export function runTool(name: string, body: (opened: Closable[]) => Promise<number>): void {
  const opened: Closable[] = [];
  body(opened)
    .catch((err: unknown) => {
      if (err instanceof ToolUsageError) {
        console.error(`${name}: ${err.message}`);
        return 2;
      }
      console.error(`${name} failed:`, err);
      return 1;
    })
    .then(async (code) => {
      for (const c of opened.reverse()) await c.close().catch(() => {});
      process.exit(code);
    });
}
