import { Duration } from 'aws-cdk-lib';
import { AlarmStatusWidget, type Alarm, Dashboard, GraphWidget, type IMetric, MathExpression, Metric, TextWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { METRICS, type MetricName } from '../functions/telemetry/metrics';
import type { DriveFunction } from './drive-function';

const PERIOD = Duration.minutes(5);

/** Where the functions' embedded metrics go: their namespace and the `Service` dimension they carry. */
export interface DriveMetricsScope {
  namespace: string;
  service: string;
}

/** One of Drive's own metrics (functions/telemetry/metrics.ts), across every route of the stack. */
export function driveMetric(scope: DriveMetricsScope, metric: MetricName, statistic = 'Sum', label?: string): Metric {
  return new Metric({ namespace: scope.namespace, metricName: METRICS[metric].name, dimensionsMap: { Service: scope.service }, statistic, period: PERIOD, label });
}

export interface DriveDashboardProps {
  metrics: DriveMetricsScope;
  api: RestApi;
  functions: Record<string, DriveFunction>;
  alarms: Alarm[];
}

/**
 * The stack's CloudWatch dashboard: requests and their outcomes, latency, bytes and orphaned objects from the
 * functions' embedded metrics; API Gateway's own count and errors; errors, throttles and duration of each
 * function; and the state of every alarm.
 */
export class DriveDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: DriveDashboardProps) {
    super(scope, id);
    const m = props.metrics;
    const perFunction = (metric: (fn: DriveFunction) => IMetric) => Object.values(props.functions).map(metric);
    // A line per route: a search, so that a route added later shows up without a change here.
    const byRoute = (metric: MetricName, statistic: string) =>
      new MathExpression({
        expression: `SEARCH('{${m.namespace},Service,Route} MetricName="${METRICS[metric].name}" Service="${m.service}"', '${statistic}', ${PERIOD.toSeconds()})`,
        usingMetrics: {},
        label: '',
        period: PERIOD,
      });
    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: `${m.service}-operations` });
    this.dashboard.addWidgets(
      new TextWidget({ markdown: `# Drive: ${m.service}\nRequests as the functions saw them (namespace \`${m.namespace}\`); API Gateway's own answers are in its metrics below. See docs/operations.md.`, width: 24, height: 2 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Requests and outcomes',
        left: [driveMetric(m, 'requests', 'Sum', 'requests'), driveMetric(m, 'serverErrors', 'Sum', '5xx'), driveMetric(m, 'clientErrors', 'Sum', '4xx'), driveMetric(m, 'rateLimited', 'Sum', '429')],
        width: 8,
      }),
      new GraphWidget({ title: 'Latency (ms)', left: [driveMetric(m, 'latency', 'p50', 'p50'), driveMetric(m, 'latency', 'p99', 'p99')], width: 8 }),
      new GraphWidget({ title: 'Bytes in and out', left: [driveMetric(m, 'bytesIn', 'Sum', 'in'), driveMetric(m, 'bytesOut', 'Sum', 'out')], width: 8 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Orphaned objects (fsck --repair deletes them)', left: [driveMetric(m, 'orphanedObjects', 'Sum', 'orphaned')], width: 8 }),
      new GraphWidget({ title: 'Requests by route', left: [byRoute('requests', 'Sum')], width: 8 }),
      new GraphWidget({ title: 'p99 latency by route (ms)', left: [byRoute('latency', 'p99')], width: 8 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'API Gateway',
        left: [props.api.metricCount({ period: PERIOD, statistic: 'Sum', label: 'requests' }), props.api.metricClientError({ period: PERIOD, statistic: 'Sum', label: '4xx' }), props.api.metricServerError({ period: PERIOD, statistic: 'Sum', label: '5xx' })],
        width: 12,
      }),
      new GraphWidget({ title: 'API Gateway latency (ms)', left: [props.api.metricLatency({ period: PERIOD, statistic: 'p50', label: 'p50' }), props.api.metricLatency({ period: PERIOD, statistic: 'p99', label: 'p99' })], width: 12 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Function errors', left: perFunction((fn) => fn.metricErrors({ period: PERIOD, statistic: 'Sum', label: fn.node.id })), width: 8 }),
      new GraphWidget({ title: 'Function throttles', left: perFunction((fn) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum', label: fn.node.id })), width: 8 }),
      new GraphWidget({ title: 'Function duration p99 (ms)', left: perFunction((fn) => fn.metricDuration({ period: PERIOD, statistic: 'p99', label: fn.node.id })), width: 8 }),
    );
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: props.alarms, width: 24 }));
  }
}
