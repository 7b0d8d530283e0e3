import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseBazelBep } from '../../src/ingest/bazel-bep.js'
import { sourceFromBuffer } from '../../src/ingest/source.js'
import { ingestFiles } from '../../src/pipeline/ingest-files.js'
import { openStore } from '../../src/store/open.js'
import { PUBLIC_FIXTURES } from '../helpers/fixtures.js'

/*
 * Issue 29, "run context from each format: Bazel's invocation id and build metadata". The real event file
 * (kahlys/battools, Bazel 7.1.2) was run without `--build_metadata`, so its `buildMetadata` event (line 2) is empty;
 * here that one line is given what `bazel test --build_metadata=COMMIT_SHA=… --build_metadata=BRANCH_NAME=…` writes
 * there, and everything else stays as Bazel wrote it (its workspace status names the host, BUILD_HOST=yle).
 */
const real = readFileSync(join(PUBLIC_FIXTURES, 'bazel-bep/runs-per-test-flaky.json'), 'utf8')
const withMetadata = (metadata: Record<string, string>) => {
  const lines = real.split('\n')
  expect(lines[1]).toBe('{"id":{"buildMetadata":{}},"buildMetadata":{}}')
  lines[1] = JSON.stringify({ id: { buildMetadata: {} }, buildMetadata: { metadata } })
  return lines.join('\n')
}

describe('Bazel BEP run context', () => {
  it('the invocation id, times and host from the real file; branch, revision and facets from --build_metadata', async () => {
    const plain = await parseBazelBep(sourceFromBuffer('bep.json', Buffer.from(real)))
    expect(plain.meta).toMatchObject({ runId: '568bb130-9336-43d7-aa17-802de275e5ee', runnerId: 'yle' })
    expect(plain.meta.branch ?? null).toBeNull()
    expect(plain.meta.revision ?? null).toBeNull()

    const text = withMetadata({
      COMMIT_SHA: '4b1f9e27c0d1',
      BRANCH_NAME: 'main',
      ROLE: 'CI',
      'env.os': 'linux',
      'ci.pipeline_url': 'https://ci.example/pipelines/7',
    })
    const r = await parseBazelBep(sourceFromBuffer('bep.json', Buffer.from(text)))
    expect(r.meta).toMatchObject({
      runId: '568bb130-9336-43d7-aa17-802de275e5ee',
      revision: '4b1f9e27c0d1',
      branch: 'main',
      pipelineUrl: 'https://ci.example/pipelines/7',
      env: { os: 'linux' },
      runnerId: 'yle',
      startedAt: '2024-05-24T12:43:28.602Z',
      finishedAt: '2024-05-24T12:43:29.039Z',
    })
    // A key that names no run field (ROLE) is not kept anywhere.
    expect(JSON.stringify(r.meta)).not.toContain('ROLE')
  })

  it('ingest stores that context on the run, under the invocation id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fw-bep-'))
    const file = join(dir, 'bep.json')
    writeFileSync(file, withMetadata({ COMMIT_SHA: 'c0ffee1', BRANCH_NAME: 'release/2.1' }))
    const store = await openStore({ db: join(dir, 's.db') })
    try {
      const summary = await ingestFiles({ store, inputs: [file], context: { suite: 'bazel' } })
      expect(summary.failed).toEqual([])
      const run = await store.getRun('568bb130-9336-43d7-aa17-802de275e5ee')
      expect(run).toMatchObject({ suite: 'bazel', revision: 'c0ffee1', branch: 'release/2.1', runnerId: 'yle' })
    } finally {
      await store.close()
    }
  })
})
