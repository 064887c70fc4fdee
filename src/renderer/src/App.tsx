import { ChatPane } from './components/Chat'
import { ConfirmDialog, Toasts } from './components/Common'
import { DropOverlay } from './components/DropOverlay'
import { ModelsSettings } from './components/ModelsSettings'
import { RightPanel } from './components/RightPanel'
import { Sidebar } from './components/Sidebar'
import { useNav } from './stores/nav'
import { useViewer } from './stores/viewer'

export function App() {
  const screen = useNav((s) => s.screen)
  const panelOpen = useViewer((s) => s.panel !== null)
  return (
    <div className={`app${panelOpen && screen === 'chat' ? ' with-panel' : ''}`}>
      <button type="button" className="skip-link" onClick={() => document.getElementById('question')?.focus()}>
        Skip to the question box
      </button>
      <Sidebar />
      <main className="main">{screen === 'chat' ? <ChatPane /> : <ModelsSettings />}</main>
      {screen === 'chat' && <RightPanel />}
      <DropOverlay />
      <ConfirmDialog />
      <Toasts />
    </div>
  )
}
