import { reportCleanUpsTo } from '../core/clean-up';
import { reportCleanUp } from '../telemetry/clean-up-report';

// Loaded by the stores the core cleans up after (nodes, objects, journal, jobs): from then on a failed
// clean-up is logged with its orphaned keys and the metric an alarm watches. A function with none of them
// (whoami, the dashboard) never cleans up, and loads neither this nor the report.
reportCleanUpsTo(reportCleanUp);
