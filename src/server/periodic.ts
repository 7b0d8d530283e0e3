/** A background loop of the server, stopped with it. */
export interface Periodic {
  /** No further run starts; resolves once the one in flight (if any) has ended. */
  stop(): Promise<void>
}

/**
 * Runs `run` after `firstAfterMs`, then again after the pause each run returns, one at a time and never once
 * stopped. `run` must not throw (each loop reports its own failures). The timers do not keep the process alive.
 * @example const loop = startPeriodic(1000, async () => { await work(); return 60_000 })
 */
export function startPeriodic(firstAfterMs: number, run: () => Promise<number>): Periodic {
  let stopped = false
  let running: Promise<unknown> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  const tick = () => {
    running = run().then((pauseMs) => {
      if (!stopped) timer = setTimeout(tick, pauseMs).unref()
    })
  }
  timer = setTimeout(tick, firstAfterMs).unref()
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
