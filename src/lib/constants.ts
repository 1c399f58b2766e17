/** Spec §9's business constants, in one place so screens and tests agree. */
export const PAGE_SIZE_FILES = 6;
export const PAGE_SIZE_INVITES = 8;
export const PAGE_SIZE_USERS = 8;
/** Spec §9: file pagination shows every page up to this many, else a window with ellipsis. */
export const PAGINATION_ALL_PAGES_MAX = 5;
export const TOAST_SHORT_MS = 1300;
export const TOAST_DEFAULT_MS = 5000;
export const TOAST_LIMIT = 5;
export const COPY_CONFIRM_MS = 1000;
/** Spec §9 / design §6: MB is 1,048,576 bytes; GB from 1,073,741,824. */
export const MB = 1_048_576;
export const GB = 1_073_741_824;
/** Spec §9: 15 bundled decorative pictures. */
export const DECORATIVE_COUNT = 15;
/** After a success message (spec §2 login/register) the app moves on after this pause. */
export const REDIRECT_DELAY_MS = 1200;
