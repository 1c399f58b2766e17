import { fuzzRoutes } from './fuzz-routes.ts';

// Each half of the routes on one database here and on the other in fuzz-routes.first.test.ts (fuzz-routes.ts says why).
fuzzRoutes('postgres', 1);
fuzzRoutes('sqlite', 2);
