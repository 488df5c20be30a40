import { setting } from '../config';

/** The CloudWatch namespace of Drive's own metrics: `DRIVE_METRICS_NAMESPACE`, which the stack sets, or `Drive`. */
export const METRICS_NAMESPACE = setting('metricsNamespace');

/** The `Service` dimension of every metric: the stack's name, so that two stacks in one account stay apart. */
export const METRICS_SERVICE = setting('metricsService');

/** Drive's metrics, by name: one table that the handlers, the stack's alarms and its dashboard all read. */
export const METRICS = {
  /** Every request answered by a function (API Gateway's own answers are in its metrics, not these). */
  requests: { name: 'Requests', unit: 'Count' },
  /** Answers 500 and above. */
  serverErrors: { name: 'ServerErrors', unit: 'Count' },
  /** Answers 400 to 499, 429 included. */
  clientErrors: { name: 'ClientErrors', unit: 'Count' },
  /** Answers 429: a key's or a link's rate limit. */
  rateLimited: { name: 'RateLimited', unit: 'Count' },
  /** From the request's arrival at the function to its answer (a stream's first byte). */
  latency: { name: 'Latency', unit: 'Milliseconds' },
  /** The request body's bytes. */
  bytesIn: { name: 'BytesIn', unit: 'Bytes' },
  /** The answer's bytes, where known when the answer starts (a stream's Content-Length). */
  bytesOut: { name: 'BytesOut', unit: 'Bytes' },
  /** Objects a failed clean-up left in the bucket with no record: fsck --repair deletes them. */
  orphanedObjects: { name: 'OrphanedObjects', unit: 'Count' },
} as const;

export type MetricName = keyof typeof METRICS;

/**
 * The fields that make a JSON log line an embedded-metric-format record: CloudWatch reads `_aws` and takes
 * each metric's value and each dimension's value from the line's own top-level fields. Every metric is kept
 * per `Service` and, when `route` is given, per `Service` and `Route` too (a method and template, about
 * thirty values: never a drive, a key or a path, which would make a metric each).
 */
export function embeddedMetrics(values: Partial<Record<MetricName, number>>, route?: string): Record<string, unknown> {
  const named = (Object.keys(values) as MetricName[]).filter((metric) => values[metric] !== undefined);
  const dimensions = route === undefined ? [['Service']] : [['Service'], ['Service', 'Route']];
  return {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [{ Namespace: METRICS_NAMESPACE, Dimensions: dimensions, Metrics: named.map((metric) => ({ Name: METRICS[metric].name, Unit: METRICS[metric].unit })) }],
    },
    Service: METRICS_SERVICE,
    ...(route === undefined ? {} : { Route: route }),
    ...Object.fromEntries(named.map((metric) => [METRICS[metric].name, values[metric]])),
  };
}
