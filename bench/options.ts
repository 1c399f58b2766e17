/** `npm run bench -- --quick [name…]`: smaller sizes and fewer samples, the whole run under three minutes. */
export const options = {
  quick: process.argv.includes('--quick'),
  names: process.argv.slice(2).filter((a) => !a.startsWith('--')),
};
