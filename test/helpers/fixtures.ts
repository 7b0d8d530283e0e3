import { join } from 'node:path'

/**
 * Real reports from public repositories, vendored with their sources and licences (test/fixtures/public/SOURCES.md),
 * so that the suite reads nothing outside the repository.
 */
export const PUBLIC_FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'public')
