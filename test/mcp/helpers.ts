import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'

/** The SDK's own client over Streamable HTTP, with a bearer token when given. */
export async function httpClient(url: string, token?: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'flakewatch-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } },
  })
  await client.connect(transport)
  return client
}

/** Calls a tool and returns its answer's JSON (and whether the tool said it failed). */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test reads the answer's fields it asserts
): Promise<{ json: any; isError: boolean; text: string }> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult
  const first = res.content[0]
  const text = first && first.type === 'text' ? first.text : ''
  let json: unknown = null
  try {
    json = JSON.parse(text)
  } catch {
    json = null
  }
  return { json, isError: res.isError === true, text }
}
