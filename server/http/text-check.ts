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

/**
 * The dotted path of the first string in a parsed JSON body that is not storable (the enclosing
 * object's path for a key, '' for the body itself), or null. Iterative, so a body nested thousands deep cannot overflow the stack.
 */
export function findUnstorableText(body: unknown): string | null {
  const stack: { value: unknown; path: string }[] = [{ value: body, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: string };
    if (typeof value === 'string') {
      if (!isStorableText(value)) return path;
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push({ value: v, path: path ? `${path}.${i}` : String(i) }));
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const p = path ? `${path}.${k}` : k;
        if (!isStorableText(k)) return path;
        stack.push({ value: v, path: p });
      }
    }
  }
  return null;
}
