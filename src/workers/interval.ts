/**
 * A background pass run every `intervalMs` on each instance, never two at once, stopped on
 * SIGTERM after the pass in flight (the scheduled deletions, the domain re-checks).
 */
export interface IntervalWorker {
  stop(): Promise<void>;
}

/** Runs `pass` every `intervalMs`; a pass still running when the next is due skips that turn. */
export function startIntervalWorker(pass: () => Promise<void>, intervalMs: number): IntervalWorker {
  let running: Promise<void> | null = null;
  let stopped = false;
  const run = () => {
    if (running || stopped) return;
    running = pass().finally(() => (running = null));
  };
  const every = setInterval(run, intervalMs);
  every.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(every);
      await running;
    },
  };
}
