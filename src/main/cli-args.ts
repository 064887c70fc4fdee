/**
 * The installed app's command-line modes (cli-mode.ts): `Docent --mcp [flags]` serves MCP on
 * stdio, `Docent --cli <command> [flags]` runs a `docent` command. Returns the `docent` arguments,
 * or null for a normal start with a window. Everything before the flag is Electron's or
 * Chromium's (the executable, `.` in development, switches), everything after it is ours.
 */
export function cliModeArgs(argv: readonly string[]): string[] | null {
  const i = argv.findIndex((a) => a === '--mcp' || a === '--cli')
  if (i < 0) return null
  const rest = argv.slice(i + 1)
  if (argv[i] === '--mcp') return ['mcp', ...rest]
  return rest.length ? rest : ['help']
}
