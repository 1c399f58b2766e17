import { DIALECTS } from '../../helpers/test-app.ts';
import { fuzzEveryRoute } from './fuzz-routes.ts';

fuzzEveryRoute('postgres', DIALECTS.includes('postgres'));
