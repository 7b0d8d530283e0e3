import { escapeMarkdown, safeUrl } from '../comment/render.js'

/** A piece of a line: plain text, a link, or inline code. Every string in it is untrusted. */
export type Inline = string | { text: string; href: string | null } | { code: string }

/** A ticket's text, kept apart from any tracker's markup so that each tracker gets its own (Markdown, wiki, ADF). */
export type Block =
  | { kind: 'heading'; text: string }
  | { kind: 'paragraph'; parts: Inline[] }
  | { kind: 'bullets'; items: Inline[][] }
  | { kind: 'code'; text: string }

/** The markup a tracker reads. */
export type Markup = 'markdown' | 'jira-wiki' | 'adf'

/** A code block's text at most: a failure message, not a log. */
export const CODE_MAX_CHARS = 2_000
/** Inline text at most (a test name, a hint). */
export const INLINE_MAX_CHARS = 300

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

// ---- Markdown (GitHub, GitLab) ----

function mdInline(p: Inline): string {
  if (typeof p === 'string') return escapeMarkdown(p, INLINE_MAX_CHARS)
  if ('code' in p) {
    const text = cut(p.code.replace(/[\r\n]+/g, ' '), INLINE_MAX_CHARS)
    // A fence one backtick longer than any run of backticks inside.
    const fence = '`'.repeat(Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length)) + 1)
    return `${fence} ${text.replace(/@(?=\w)/g, '@\u200b')} ${fence}`
  }
  const href = safeUrl(p.href)
  const text = escapeMarkdown(p.text, INLINE_MAX_CHARS)
  // Parentheses would end the link early; encodeURIComponent leaves them be.
  const safe = href?.replace(/[()\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
  return safe ? `[${text}](${safe})` : text
}

function toMarkdown(blocks: Block[]): string {
  const out: string[] = []
  for (const b of blocks) {
    if (b.kind === 'heading') out.push(`### ${escapeMarkdown(b.text, INLINE_MAX_CHARS)}`)
    else if (b.kind === 'paragraph') out.push(b.parts.map(mdInline).join(''))
    else if (b.kind === 'bullets') out.push(b.items.map((i) => `- ${i.map(mdInline).join('')}`).join('\n'))
    else {
      const text = cut(b.text, CODE_MAX_CHARS)
      const fence = '`'.repeat(Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length)) + 1)
      out.push(`${fence}text\n${text}\n${fence}`)
    }
  }
  return out.join('\n\n')
}

// ---- Jira wiki markup (Server / Data Center, REST v2) ----

function wikiText(text: string): string {
  // eslint-disable-next-line no-control-regex
  const one = cut(text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim(), INLINE_MAX_CHARS)
  // Every character that starts markup (effects, links, macros, tables, mentions) is escaped.
  return one.replace(/[\\{}[\]*_+\-^~?|!#@]/g, '\\$&')
}

function wikiInline(p: Inline): string {
  if (typeof p === 'string') return wikiText(p)
  if ('code' in p) return `{{${wikiText(p.code)}}}`
  const href = safeUrl(p.href)
  return href ? `[${wikiText(p.text)}|${href.replace(/[|\]\s]/g, encodeURIComponent)}]` : wikiText(p.text)
}

function toWiki(blocks: Block[]): string {
  const out: string[] = []
  for (const b of blocks) {
    if (b.kind === 'heading') out.push(`h3. ${wikiText(b.text)}`)
    else if (b.kind === 'paragraph') out.push(b.parts.map(wikiInline).join(''))
    else if (b.kind === 'bullets') out.push(b.items.map((i) => `* ${i.map(wikiInline).join('')}`).join('\n'))
    // Nothing inside {noformat} is markup; only its own closing tag would end it.
    else out.push(`{noformat}\n${cut(b.text, CODE_MAX_CHARS).replace(/\{noformat\}/gi, '{ noformat}')}\n{noformat}`)
  }
  return out.join('\n\n')
}

// ---- Atlassian Document Format (Jira Cloud, REST v3) ----

interface AdfNode {
  type: string
  text?: string
  attrs?: Record<string, unknown>
  marks?: { type: string; attrs?: Record<string, unknown> }[]
  content?: AdfNode[]
}

/** ADF text nodes may not be empty. */
function adfInline(p: Inline): AdfNode[] {
  if (typeof p === 'string') {
    const text = cut(p, INLINE_MAX_CHARS)
    return text ? [{ type: 'text', text }] : []
  }
  if ('code' in p) {
    const text = cut(p.code, INLINE_MAX_CHARS)
    return text ? [{ type: 'text', text, marks: [{ type: 'code' }] }] : []
  }
  const text = cut(p.text, INLINE_MAX_CHARS)
  const href = safeUrl(p.href)
  if (!text) return []
  return [href ? { type: 'text', text, marks: [{ type: 'link', attrs: { href } }] } : { type: 'text', text }]
}

function toAdf(blocks: Block[]): AdfNode[] {
  return blocks.map((b) => {
    if (b.kind === 'heading') return { type: 'heading', attrs: { level: 3 }, content: adfInline(b.text) }
    if (b.kind === 'paragraph') return { type: 'paragraph', content: b.parts.flatMap(adfInline) }
    if (b.kind === 'bullets') {
      return {
        type: 'bulletList',
        content: b.items.map((i) => ({
          type: 'listItem',
          content: [{ type: 'paragraph', content: i.flatMap(adfInline) }],
        })),
      }
    }
    const text = cut(b.text, CODE_MAX_CHARS)
    return { type: 'codeBlock', attrs: { language: 'text' }, content: text ? [{ type: 'text', text }] : [] }
  })
}

/**
 * A ticket's text in a tracker's markup. Markdown and wiki markup come back as strings, ADF as the document
 * object Jira Cloud's REST v3 takes. Untrusted text never becomes markup, links or mentions in any of them.
 * @example renderBlocks([{ kind: 'paragraph', parts: ['flaky: ', { code: 'a::b' }] }], 'markdown')
 */
export function renderBlocks(blocks: Block[], markup: 'markdown' | 'jira-wiki'): string
export function renderBlocks(blocks: Block[], markup: 'adf'): object
export function renderBlocks(blocks: Block[], markup: Markup): string | object
export function renderBlocks(blocks: Block[], markup: Markup): string | object {
  if (markup === 'markdown') return toMarkdown(blocks)
  if (markup === 'jira-wiki') return toWiki(blocks)
  return { version: 1, type: 'doc', content: toAdf(blocks) }
}
