import { journal, nodes } from './aws/dynamodb';
import { objects } from './aws/s3';
import { sweepJournal } from './core/journal';

/**
 * Run on a schedule (EventBridge in AWS, a timer on the local host): deletes the bytes that interrupted
 * uploads stored and never recorded, as their journal entries name them.
 */
export const handler = async (): Promise<{ closed: number }> => {
  const closed = await sweepJournal({ nodes, objects, journal });
  if (closed > 0) console.log(JSON.stringify({ level: 'info', message: 'swept the journal entries of interrupted uploads', closed }));
  return { closed };
};
