import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App'
import { loadInitialState, startBridge } from './bridge'
import { importFolders } from './importFolders'
import './styles.css'

// Subscribe to engine events before the first request, so no progress event is missed.
startBridge(window.docent)
window.docentApp = { importFolders }
void loadInitialState()

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
)
