/**
 * Checkout roots of common CI systems. Reports that give absolute paths (Jest's `--json`) would otherwise give
 * the same test a different id on each agent (`/home/vsts/work/1/s/…` vs `/home/vsts/work/3/s/…`).
 */
const CHECKOUT_ROOTS: RegExp[] = [
  // GitHub Actions (Linux, macOS; also Azure Pipelines on macOS): /home/runner/work/<repo>/<repo>/
  /^(?:\/home\/runner|\/Users\/runner)\/work\/[^/]+\/[^/]+\//,
  // GitHub Actions and Azure Pipelines on Windows: D:\a\<repo>\<repo>\ and D:\a\1\s\
  /^[A-Za-z]:[/\\]a[/\\][^/\\]+[/\\][^/\\]+[/\\]/,
  // Azure Pipelines on Linux: /home/vsts/work/1/s/
  /^\/home\/vsts\/work\/\d+\/s\//,
  // GitLab (default builds dir): /builds/<group>/<project>/
  /^\/builds\/[^/]+\/[^/]+\//,
  // CircleCI, Bitbucket Pipelines, GitHub container actions
  /^(?:\/home\/circleci\/project|\/root\/project|\/opt\/atlassian\/pipelines\/agent\/build|\/github\/workspace)\//,
  // Jenkins: …/workspace/<job>/
  /^.*?[/\\]workspace[/\\][^/\\]+[/\\]/,
]

/**
 * Makes an absolute path from a CI checkout repository-relative, with `/` separators; other paths are returned
 * unchanged (apart from the separators).
 * @example repoRelativePath('/home/vsts/work/1/s/src/ws/a.spec.ts') // 'src/ws/a.spec.ts'
 */
export function repoRelativePath(path: string): string {
  for (const root of CHECKOUT_ROOTS) {
    const m = root.exec(path)
    if (m && m[0].length < path.length) return path.slice(m[0].length).replace(/\\/g, '/')
  }
  return path.includes('\\') && /^[A-Za-z]:\\/.test(path) ? path.replace(/\\/g, '/') : path
}

/**
 * A spec file as both of RSpec's reports name it (`./spec/a_spec.rb` in each), without the leading `./`, so that
 * it is the same module as in every other format.
 * @example rspecFile('./spec/models/cart_spec.rb') // 'spec/models/cart_spec.rb'
 */
export function rspecFile(path: string): string {
  return repoRelativePath(path).replace(/^(?:\.\/)+/, '')
}
