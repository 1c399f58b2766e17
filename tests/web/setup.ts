import '@testing-library/jest-dom/vitest';
import { afterEach } from 'vitest';
import { cleanup, configure } from '@testing-library/react';

// Screens load on demand (lazy routes); on a busy machine the first import can take over the
// default 1 s of findBy/waitFor: three runs of this project beside three browser suites on two
// cores saw an admin screen's first import take over 5 s. Waiting longer for the state changes
// no assertion; the test's own 20 s limit still ends one that never gets there.
configure({ asyncUtilTimeout: 15_000 });

// jsdom has no matchMedia; react-hot-toast asks it about reduced motion.
if (typeof window !== 'undefined' && !window.matchMedia) {
  window.matchMedia = (query: string) =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addListener: () => {},
      removeListener: () => {},
      addEventListener: () => {},
      removeEventListener: () => {},
      dispatchEvent: () => false,
    }) as MediaQueryList;
}

// jsdom does not implement scrolling; screens scroll to the top on navigation and paging (issue 11).
if (typeof window !== 'undefined') window.scrollTo = () => {};

afterEach(() => cleanup());
