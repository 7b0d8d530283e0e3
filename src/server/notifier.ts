import type { LookReport } from '../notify/look.js'

export interface NotifierOptions {
  /** Between looks, from the end of one to the start of the next; the first comes after at most a second. */
  intervalMs: number
  look: () => Promise<LookReport>
  onReport: (report: LookReport) => void
}

/** What `/healthz` tells about the notifier. */
export interface NotifierStatus {
  looks: number
  lastLookAt: string | null
}

export interface Notifier {
  status(): NotifierStatus
  stop(): Promise<void>
}

/**
 * Looks for state changes every `intervalMs`, one look at a time, for as long as the server runs. The look itself
 * is the caller's (the analysis worker's, in `createApp`): this only keeps time.
 * @example const notifier = startNotifier({ intervalMs: 60_000, look: () => builder.look(request), onReport })
 */
export function startNotifier(opts: NotifierOptions): Notifier {
  let running: Promise<unknown> = Promise.resolve()
  let stopped = false
  let looks = 0
  let lastLookAt: string | null = null
  let timer: NodeJS.Timeout | undefined
  const tick = () => {
    running = (async () => {
      try {
        opts.onReport(await opts.look())
      } catch (error) {
        opts.onReport({ warnings: [`notifications: ${(error as Error).message}`], summary: null })
      }
      looks++
      lastLookAt = new Date().toISOString()
      if (!stopped) timer = setTimeout(tick, opts.intervalMs).unref()
    })()
  }
  timer = setTimeout(tick, Math.min(opts.intervalMs, 1000)).unref()
  return {
    status: () => ({ looks, lastLookAt }),
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
