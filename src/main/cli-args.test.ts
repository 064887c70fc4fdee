import { describe, expect, it } from 'vitest'
import { cliModeArgs } from './cli-args'

describe('the installed app’s command-line modes', () => {
  it('starts a window without --mcp or --cli', () => {
    expect(cliModeArgs(['/Applications/Docent.app/Contents/MacOS/Docent'])).toBeNull()
    expect(cliModeArgs(['electron', '.', '--inspect-brk'])).toBeNull()
  })

  it('--mcp serves MCP with the flags after it; Chromium switches before it are not ours', () => {
    expect(cliModeArgs(['Docent', '--no-sandbox', '--mcp', '--allow-writes', '--data', '/d'])).toEqual([
      'mcp',
      '--allow-writes',
      '--data',
      '/d',
    ])
  })

  it('--cli runs the command after it, and help without one', () => {
    expect(cliModeArgs(['electron', '.', '--cli', 'search', 'tool errors', '--json'])).toEqual(['search', 'tool errors', '--json'])
    expect(cliModeArgs(['Docent.exe', '--cli'])).toEqual(['help'])
  })
})
