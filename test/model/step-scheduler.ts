/**
 * Decides the order in which port calls in flight take effect: each call waits at `gate` until the scheduler
 * picks it, at random (from `seed`) among the calls waiting then. Any order it picks is one a real store could
 * give, since each memory port call is one atomic step; the same seed and code give the same order. It does
 * what fast-check's `fc.scheduler()` does, with less bookkeeping per step (about five times as many runs a
 * second under jest), and keeps the labels of the calls in the order taken, for a counterexample.
 */
export class StepScheduler {
  private readonly waiting: { label: string; go: () => void }[] = [];
  /** The calls let through, in order. */
  readonly trace: string[] = [];
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Waits for the scheduler to pick this call. */
  gate = (label: string): Promise<void> => new Promise((go) => this.waiting.push({ label, go }));

  /** Lets the waiting calls through one at a time, in a random order, until `done()` and none waits. */
  async run(done: () => boolean): Promise<void> {
    for (let idle = 0; ; ) {
      // Every call let through runs until it waits at its next gate (or ends) before the next pick: one turn of
      // the event loop drains the microtasks. Without it a call just let through would lose every pick to the
      // calls already waiting, and long runs of one request's steps would never be tried.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.waiting.length === 0) {
        if (done()) return;
        // Something waits outside the gates (a timer): let the event loop turn again.
        if (++idle === 10_000) throw new Error(`the scheduled tasks stopped moving after ${this.trace.length} steps`);
        continue;
      }
      idle = 0;
      const [picked] = this.waiting.splice(this.random(this.waiting.length), 1);
      this.trace.push(picked.label);
      picked.go();
    }
  }

  /** A number in [0, below), from mulberry32. */
  private random(below: number): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  }
}
