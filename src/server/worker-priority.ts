import { setPriority } from 'node:os'

/**
 * The niceness of the server's background work (0 normal, 19 lowest): parsing and storing uploads, analysis
 * updates and builds, bundle downloads. On a small machine, at the server's own priority they would take the CPU
 * from the HTTP thread, and every read and `/healthz` would wait behind them; lower, they take what the requests
 * leave. An upload takes longer under load, a read does not.
 */
export const BACKGROUND_NICE = 10

/** Lowers a worker process (by pid) to {@link BACKGROUND_NICE}; where that is not allowed, it runs as it is. */
export function lowerProcessPriority(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    setPriority(pid, BACKGROUND_NICE)
  } catch {
    // Not allowed here (some containers): the worker keeps the server's priority.
  }
}

/**
 * Lowers the calling worker thread to {@link BACKGROUND_NICE}. Only on Linux, where the nice value belongs to each
 * thread (setpriority(2), "BUGS"); elsewhere the same call would lower the whole server, so the thread keeps it.
 */
export function lowerThreadPriority(): void {
  if (process.platform !== 'linux') return
  try {
    setPriority(0, BACKGROUND_NICE)
  } catch {
    // Not allowed here: the thread keeps the server's priority.
  }
}
