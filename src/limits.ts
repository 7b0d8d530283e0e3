/**
 * Every count and size flakewatch accepts from input, in one place. A report over one of these is refused whole
 * with a {@link ReportLimitError} naming the field and the limit (exit 2 on the CLI, 422 over HTTP), and the
 * store is left as it was. The table in docs/ingest.md lists the same values; a test keeps the two in step.
 *
 * Why limits at all: a report is untrusted input, and a few bytes such as `"retries": 1000000000` would otherwise
 * ask for a billion attempts. Each limit is far above what real runners write.
 */

/** Attempts one result may have (the first try plus retries, reruns and repeats). Configurable per ingest. */
export const DEFAULT_MAX_ATTEMPTS_PER_RESULT = 100

/** The highest value `--max-attempts` / `FLAKEWATCH_MAX_ATTEMPTS` may raise the attempt limit to. */
export const MAX_ATTEMPTS_CEILING = 10_000

/** Test cases (results before repeats are folded) one report may hold. A 1 GB JUnit file holds about 14M. */
export const MAX_CASES_PER_REPORT = 20_000_000

/** Runs one report may fan out into (one per facet set, e.g. Playwright projects). */
export const MAX_RUNS_PER_REPORT = 1_000

/** Report files one `ingest` command takes (after expanding directories and globs). */
export const MAX_FILES_PER_COMMAND = 1_000_000

/** Characters kept of one message, stack trace or captured output while parsing; the rest is marked as cut. */
export const MAX_TEXT = 64 * 1024

/** Characters kept of one message or stack in the store (they are deduplicated there by content). */
export const MAX_STORED_TEXT = 16_384

/** Longest test name, class name, module or file in an identity; longer ones refuse the report. */
export const MAX_NAME = 16 * 1024

/** Element nesting of an XML report (PHPUnit nests suites a few levels). */
export const MAX_XML_DEPTH = 256

/** Nesting of a JSON report. */
export const MAX_JSON_DEPTH = 256

/**
 * Bytes of a JSON report. JSON reports are parsed whole (JUnit and TRX stream), so their memory follows their
 * size: about 8× the file. Runners that write reports this large write JUnit too.
 */
export const MAX_JSON_REPORT_BYTES = 256 * 1024 * 1024

/**
 * Characters of one line of a line-based report (`go test -json`, Bazel's JSON event stream, TAP). A line is one
 * event; test2json splits output at 4 KB, and Bazel's longest events (the command line) are a few hundred KB.
 */
export const MAX_LINE_CHARS = 16 * 1024 * 1024

/** Nesting of TAP subtests (indentation levels). */
export const MAX_TAP_DEPTH = 256

/**
 * Tests one streamed report may hold open at once (started, not yet finished): Go tests running in parallel,
 * Bazel targets whose summary has not come yet, TAP subtests waiting for their parent's line.
 */
export const MAX_OPEN_TESTS = 1_000_000

/** Characters of captured output held for open tests together (each also capped at `MAX_TEXT`); the rest is cut. */
export const MAX_OPEN_OUTPUT = 64 * 1024 * 1024

/** Env facets per run, and the length of a facet key or value. */
export const MAX_FACETS = 64
export const MAX_FACET_TEXT = 256

/** Longest duration trusted, in ms (one week): `time="1e308"` would otherwise make "CI time lost: Infinity". */
export const MAX_DURATION_MS = 7 * 24 * 3600 * 1000

/** A run time further than this after the moment of ingest is not trusted (clock skew or a bogus report). */
export const MAX_FUTURE_SKEW_MS = 24 * 3600 * 1000

/** A run time before this is not trusted either. */
export const EARLIEST_TRUSTED_TIME = Date.UTC(2000, 0, 1)

/** The limits an ingest applies, after defaults. */
export interface IngestLimits {
  maxAttemptsPerResult: number
}

/**
 * The ingest limits from options, falling back to the defaults. Throws on a value outside 1..ceiling.
 * @example resolveIngestLimits({ maxAttemptsPerResult: 200 }).maxAttemptsPerResult // 200
 */
export function resolveIngestLimits(opts: Partial<IngestLimits> = {}): IngestLimits {
  const max = opts.maxAttemptsPerResult ?? DEFAULT_MAX_ATTEMPTS_PER_RESULT
  if (!Number.isInteger(max) || max < 1 || max > MAX_ATTEMPTS_CEILING) {
    throw new RangeError(`max attempts per result must be an integer from 1 to ${MAX_ATTEMPTS_CEILING}, got ${max}`)
  }
  return { maxAttemptsPerResult: max }
}

/**
 * Suite or package timings one report may give its run (`go test ./...` of a very large monorepo has a few
 * thousand packages).
 */
export const MAX_RUN_TIMINGS = 50_000
