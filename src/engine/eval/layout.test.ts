import { describe, expect, it } from 'vitest'
import { layoutDefects } from './layout'

/** The shapes below are rendered answers of the real 1.5B model on held-out questions (evals/reports). */
describe('lines of an answer that do not read as written', () => {
  it('finds a table row alone, a header alone, and not a whole table', () => {
    expect(layoutDefects('URL mode is safer [1].\n| mode | string | form, url | The mode. | [2]')).toEqual(['table_row_alone'])
    expect(
      layoutDefects(
        'MCP clients MUST apply RFC 9207 [1]:\n| authorization_response_iss_parameter_supported | iss in response | Client action | [1]',
      ),
    ).toEqual(['table_row_alone'])
    expect(layoutDefects('Fields [1]:\n| Name | Type |\n| --- | --- |\n| mode | string [1] |')).toEqual([])
  })

  it('finds a lone numbered item out of its list, and not a run of steps in sequence', () => {
    expect(layoutDefects('The client sends it in both requests [1].\n3. MUST use the canonical URI [2].')).toEqual([
      'numbered_out_of_list',
    ])
    expect(layoutDefects('The client must POST [1].\n3. The body is one message [1].\n4. The server answers [1].')).toEqual([])
    expect(layoutDefects('1. Print the tower [1].\n2. Measure it [1].')).toEqual([])
  })

  it('finds sentences run together after markers, and not sentences that end', () => {
    expect(layoutDefects('Users go to a secure page (served over HTTPS) [1] The page presents a form [1]')).toEqual([
      'run_together',
    ])
    expect(layoutDefects('2025-06-18: Logs are in ~/Library/Logs/Claude [1] 2025-11-25: Getting logs [2]')).toEqual([
      'run_together',
    ])
    expect(layoutDefects('Logs are in ~/Library/Logs/Claude [1]. Each server has its own file [2].')).toEqual([])
  })

  it('finds a lead-in to nothing: prose after its colon, nothing after it, or the next item at its own level', () => {
    expect(layoutDefects('No installation is required [1]: Changes since the release accumulate here [2].')).toEqual([
      'lead_in_to_nothing',
    ])
    expect(layoutDefects('The schema is restricted to these types [1]:')).toEqual(['lead_in_to_nothing'])
    expect(layoutDefects('1. Send it [1].\n2. If the input is a response [1]:\n3. If the input is a request [1].')).toEqual([
      'lead_in_to_nothing',
    ])
    expect(
      layoutDefects('The codes are [1]:\n- -32602 [1]\n\n1. If the input is a response [1]:\n   - the server returns 202 [1]'),
    ).toEqual([])
  })

  it('reads nothing inside code', () => {
    expect(layoutDefects('Send [1]:\n```\n| a |\n3. x\n```')).toEqual([])
  })

  it('finds a code block whose closing fence is glued on or missing, and not a closed one', () => {
    // b04 of mcp-docs-releases (fit half), as the 957a704 run rendered it.
    expect(
      layoutDefects('Request [1]:\n```\n{ "jsonrpc": "2.0", "id": 1 }```\n\n[1]\n\nClients can control logging [2].'),
    ).toEqual(['code_unclosed'])
    expect(layoutDefects('Run it [1]:\n```sh\nnpx server')).toEqual(['code_unclosed'])
    expect(layoutDefects('Run it [1]:\n```sh\nnpx server\n```\n\n[1]')).toEqual([])
  })

  it('finds a list run into one line after its colon, and not a dash in a sentence or a list as lines', () => {
    // q05 of mcp-docs (fit half), as a199b04 rendered it.
    expect(
      layoutDefects(
        'A tool definition includes: - name: Unique identifier for the tool - title: Optional name - description: What it does [1].',
      ),
    ).toEqual(['list_inline'])
    expect(layoutDefects('Ports range over 8000 - 9000: pick one - any will do [1].')).toEqual([])
    expect(
      layoutDefects(
        'A tool definition includes:\n- name: Unique identifier\n- title: Optional name\n- description: What it does [1]',
      ),
    ).toEqual([])
  })
})
