/**
 * The Electron IPC channel names between the preload and the main process. Both sides import these,
 * so a renamed channel cannot leave one side listening on the old name. Plain constants only: the
 * sandboxed preload bundles this file.
 */
export const IPC_CHANNELS = {
  invoke: 'docent:invoke',
  event: 'docent:event',
  pickFolder: 'docent:pickFolder',
  openExternal: 'docent:openExternal',
  libraryLocation: 'docent:libraryLocation',
  setLibraryLocation: 'docent:setLibraryLocation',
} as const
