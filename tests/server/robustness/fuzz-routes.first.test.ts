import { fuzzRoutes } from './fuzz-routes.ts';

// Each half of the routes on one database here and on the other in fuzz-routes.second.test.ts (fuzz-routes.ts says why).
fuzzRoutes('sqlite', 1);
fuzzRoutes('postgres', 2);
