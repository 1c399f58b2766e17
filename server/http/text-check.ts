/**
 * Text a database cannot keep as sent (design §5: bad input is a 400 and changes nothing).
 * PostgreSQL refuses NUL in text outright (a 500 if it reaches a query), and an unpaired UTF-16
 * surrogate is silently turned into U+FFFD on the way to either database, so a lookup or a
 * stored name would no longer match what the client sent.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly the character this looks for.
const NOT_STORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorableText(s: string): boolean {
  return !NOT_STORABLE.test(s);
}

interface Container {
  value: object;
  parent: Container | null;
  /** This container's key or index in its parent. */
  key: string | number;
}

/** Dotted path of `key` inside `at` (or of `at` itself), built only once something is found. */
function pathOf(at: Container, key?: string | number): string {
  const keys = key === undefined ? [] : [key];
  for (let c: Container | null = at; c?.parent; c = c.parent) keys.push(c.key);
  return keys.reverse().join('.');
}

/**
 * The dotted path of the first string in a parsed JSON body that is not storable (the enclosing
 * object's path for a key, '' for the body itself), or null. Iterative, so a body nested
 * thousands deep cannot overflow the stack; it keeps a frame per object or array, not per value,
 * and makes no path until it finds one, so a 1 MiB array of 150,000 numbers costs a loop, not
 * 150,000 frames and path strings.
 */
export function findUnstorableText(body: unknown): string | null {
  if (typeof body === 'string') return isStorableText(body) ? null : '';
  if (body === null || typeof body !== 'object') return null;
  const stack: Container[] = [{ value: body, parent: null, key: '' }];
  while (stack.length > 0) {
    const at = stack.pop() as Container;
    const visit = (v: unknown, key: string | number): string | null => {
      if (typeof v === 'string') return isStorableText(v) ? null : pathOf(at, key);
      if (v !== null && typeof v === 'object') stack.push({ value: v, parent: at, key });
      return null;
    };
    if (Array.isArray(at.value)) {
      for (let i = 0; i < at.value.length; i++) {
        const found = visit(at.value[i], i);
        if (found !== null) return found;
      }
    } else {
      for (const [k, v] of Object.entries(at.value)) {
        if (!isStorableText(k)) return pathOf(at);
        const found = visit(v, k);
        if (found !== null) return found;
      }
    }
  }
  return null;
}
