/**
 * A MIME entry is `type/subtype` or `type/*` (design §7). Apart from admin.ts's schemas so the
 * Site Settings screen can check an entry as it is typed without the schema library
 * (contract/README.md).
 */
export const MIME_PATTERN = '^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/(\\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,126})$';
