/** `npm run bench -- --quick [name…]`: smaller sizes and fewer samples, the whole run under three minutes. */
export const options = {
  quick: process.argv.includes('--quick'),
  /** `npm run bench -- browser --first-load`: only the bytes-on-the-wire row (no Lighthouse, no upload). */
  firstLoadOnly: process.argv.includes('--first-load'),
  names: process.argv.slice(2).filter((a) => !a.startsWith('--')),
};
