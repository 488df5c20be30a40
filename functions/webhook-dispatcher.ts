import { changeSource } from './wiring/change-source';
import { deliveryQueue } from './wiring/delivery-queue';
import { webhooks } from './wiring/webhooks';
import { dispatch } from './core/webhooks';
import { describeError, log } from './telemetry/log';

/**
 * Run by the sequencer's nudge (an async invoke with `{ drive }`) after it commits changes on a drive that
 * has webhooks, and by a 1-minute schedule for nudges lost (`{ drives }`, or nothing: the event names the
 * drives to follow, or every drive with webhooks when it names none). Queues each drive's new changes as deliveries, from the dispatcher's stored position.
 */
export const handler = async (event: { drive?: string; drives?: string[] } = {}): Promise<{ queued: number }> => {
  const named = [...(event.drive ? [event.drive] : []), ...(event.drives ?? [])];
  // The schedule names none: every drive that has had a webhook (a drive with none left costs one Query).
  const drives = named.length > 0 ? [...new Set(named)] : await webhooks.drives();
  let queued = 0;
  for (const drive of drives) {
    try {
      queued += await dispatch({ source: changeSource, store: webhooks, queue: deliveryQueue }, drive, { now: new Date() });
    } catch (error) {
      log('ERROR', 'dispatching webhook deliveries failed', { drive, error: describeError(error) });
    }
  }
  return { queued };
};
