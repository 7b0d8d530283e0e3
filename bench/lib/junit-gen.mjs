// Deterministic JUnit XML generator for benchmarks: `tests` testcases per file, a few failing.
import { createWriteStream } from 'node:fs'

export function junitXml(runIndex, tests, { failEvery = 97, stamp = Date.UTC(2026, 0, 1) } = {}) {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="bench" tests="${tests}">`,
    `<testsuite name="bench" tests="${tests}" timestamp="${new Date(stamp + runIndex * 3_600_000).toISOString()}">`,
  ]
  for (let t = 0; t < tests; t++) {
    const cls = `com.example.module${t % 50}.FeatureTest`
    const name = `test case number ${t} does something useful`
    if ((t * 31 + runIndex) % failEvery === 0) {
      lines.push(
        `<testcase classname="${cls}" name="${name}" time="0.${(t % 900) + 100}"><failure message="expected 200 but got 500 at run ${runIndex}" type="AssertionError">AssertionError: expected 200 but got 500\n  at FeatureTest.java:${t % 300}</failure></testcase>`,
      )
    } else lines.push(`<testcase classname="${cls}" name="${name}" time="0.${(t % 900) + 100}"/>`)
  }
  lines.push('</testsuite>', '</testsuites>', '')
  return lines.join('\n')
}

/**
 * Writes one big JUnit file of about `bytes` bytes, streaming so that the generator itself stays small.
 * `outputBytes` of captured system-out per test case: large reports are large mostly because of captured output
 * (0 gives the worst case for memory, the most test cases per megabyte).
 */
export async function writeBigJunit(path, bytes, outputBytes = 0) {
  const output = 'log line: request handled in 12 ms, cache hit ratio 0.93, queue depth 4\n'
    .repeat(Math.ceil(outputBytes / 72))
    .slice(0, outputBytes)
  const out = createWriteStream(path)
  const write = (s) => (out.write(s) ? Promise.resolve() : new Promise((r) => out.once('drain', r)))
  await write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="big">\n<testsuite name="big">\n')
  let written = 0
  let i = 0
  while (written < bytes) {
    const line =
      i % 50 === 0
        ? `<testcase classname="com.example.Big${i % 1000}" name="case ${i}" time="0.01"><failure message="boom ${i}">stack line one\nstack line two ${i}</failure><system-out>some output ${i}</system-out></testcase>\n`
        : outputBytes > 0
          ? `<testcase classname="com.example.Big${i % 1000}" name="case ${i}" time="0.01"><system-out>${output}</system-out></testcase>\n`
          : `<testcase classname="com.example.Big${i % 1000}" name="case ${i}" time="0.01"/>\n`
    await write(line)
    written += line.length
    i++
  }
  await write('</testsuite>\n</testsuites>\n')
  await new Promise((r) => out.end(r))
  return i
}
