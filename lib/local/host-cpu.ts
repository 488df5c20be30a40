/**
 * The local host's CPU, split as AWS would bill it: inside the handlers' invocations (what Lambda bills) and in
 * the host's own emulation of API Gateway and the Lambda service around them (building and delivering the
 * proxy event, writing a buffered result back). Read by the bench; a few microseconds a request to keep.
 */
export interface HostCpu {
  invocations: number;
  /** CPU from the start to the end of each invocation, summed: exact while invocations do not overlap. */
  handlerMicros: number;
  /** CPU of the host's own synchronous steps around each invocation, summed (exact at any concurrency). */
  emulationMicros: number;
}

export const hostCpu: HostCpu = { invocations: 0, handlerMicros: 0, emulationMicros: 0 };

/** CPU time this process has used, in microseconds. */
export function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}
