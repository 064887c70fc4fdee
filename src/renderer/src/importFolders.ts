import { useCollections } from './stores/collections'
import { useNav } from './stores/nav'

/**
 * The one way folders enter the library: the drop overlay, the "Add folder" button, onboarding and
 * the e2e tests (through `window.docentApp.importFolders`) all call this, so they cannot drift apart.
 * Each folder becomes its own import job; progress arrives on `import.progress`.
 */
export async function importFolders(paths: string[]): Promise<void> {
  const folders = [...new Set(paths.map((p) => p.trim()).filter(Boolean))]
  if (folders.length === 0) {
    useNav.getState().notify("Docent couldn't tell where that folder is. Use “Add folder” instead.", 'error')
    return
  }
  useNav.getState().setScreen('chat')
  await Promise.all(folders.map((folder) => useCollections.getState().importFolder(folder)))
}
