import { describe, expect, it } from 'vitest'
import { renderBlocks, type Block } from '../../src/tickets/document.js'

/** A test name and a failure message as an attacker (or an unlucky test) could write them. */
const HOSTILE: Block[] = [
  { kind: 'heading', text: 'h1. *bold* @team' },
  {
    kind: 'paragraph',
    parts: [
      '<img src=x onerror=alert(1)> [click](javascript:alert(1)) [x|javascript:alert(1)] @channel #1 {color:red}',
      { code: 'a`b``c @dev' },
      { text: 'run 7', href: 'javascript:alert(1)' },
      ' ',
      { text: 'pipeline', href: 'https://ci.example/p/1?a=(b)' },
    ],
  },
  { kind: 'bullets', items: [['* item !image.png!']] },
  { kind: 'code', text: 'line 1\n```\n{noformat}\n@everyone' },
]

describe('ticket bodies: untrusted text never becomes markup, links or mentions', () => {
  it('Markdown (GitHub, GitLab)', () => {
    const md = renderBlocks(HOSTILE, 'markdown')
    expect(md).not.toMatch(/<img/)
    expect(md).toContain('&lt;img src=x onerror=alert\\(1\\)&gt;')
    expect(md).not.toMatch(/\]\(javascript:/)
    expect(md).not.toMatch(/@(team|channel|dev)\b/)
    expect(md).toContain('run 7')
    expect(md).toContain('[pipeline](https://ci.example/p/1?a=%28b%29)')
    // The code block's fence is longer than any backtick run inside it, so ``` in a message cannot close it.
    expect(md).toMatch(/^````text\nline 1\n```\n\{noformat\}\n@everyone\n````$/m)
    expect(md).toContain('``` a`b``c @\u200bdev ```')
  })

  it('Jira wiki markup (Server/Data Center)', () => {
    const wiki = renderBlocks(HOSTILE, 'jira-wiki')
    expect(wiki).toContain('h3. h1. \\*bold\\* \\@team')
    expect(wiki).not.toMatch(/(^|[^\\])\[x\|javascript/)
    expect(wiki).toContain('\\{color:red\\}')
    expect(wiki).toContain('\\* item \\!image.png\\!')
    expect(wiki).not.toContain('javascript:alert(1)]')
    expect(wiki).toContain('[pipeline|https://ci.example/p/1?a=(b)]')
    // Only the block's own tags open and close it.
    expect(wiki.match(/\{noformat\}/g)).toHaveLength(2)
  })

  it('Atlassian Document Format (Jira Cloud)', () => {
    const adf = renderBlocks(HOSTILE, 'adf') as { version: number; type: string; content: { type: string }[] }
    expect(adf).toMatchObject({ version: 1, type: 'doc' })
    expect(adf.content.map((n) => n.type)).toEqual(['heading', 'paragraph', 'bulletList', 'codeBlock'])
    const text = JSON.stringify(adf)
    expect(text).not.toContain('"mention"')
    expect(text).not.toContain('"href":"javascript')
    expect(text).toContain('"href":"https://ci.example/p/1?a=(b)"')
  })
})
