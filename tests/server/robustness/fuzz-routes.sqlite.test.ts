import { fuzzEveryRoute } from './fuzz-routes.ts';

fuzzEveryRoute('sqlite');
