import { useEffect, useRef, useState } from 'react'
import { docent } from '../docent'
import { importFolders } from '../importFolders'
import { FolderIcon } from './Icons'

function carriesFiles(e: DragEvent): boolean {
  return Array.from(e.dataTransfer?.types ?? []).includes('Files')
}

/**
 * A full-window drop target. Dropped folders are resolved to paths by the preload
 * (`pathForFile`) and handed to `importFolders`; a drop never navigates the window.
 */
export function DropOverlay() {
  const [active, setActive] = useState(false)
  const depth = useRef(0)

  useEffect(() => {
    const onEnter = (e: DragEvent) => {
      if (!carriesFiles(e)) return
      e.preventDefault()
      depth.current++
      setActive(true)
    }
    const onOver = (e: DragEvent) => {
      if (!carriesFiles(e)) return
      e.preventDefault()
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy'
    }
    const onLeave = (e: DragEvent) => {
      if (!carriesFiles(e)) return
      depth.current = Math.max(0, depth.current - 1)
      if (depth.current === 0) setActive(false)
    }
    const onDrop = (e: DragEvent) => {
      // Always prevent the default: a dropped file must never replace the app page.
      e.preventDefault()
      depth.current = 0
      setActive(false)
      const files = Array.from(e.dataTransfer?.files ?? [])
      if (files.length === 0) return
      const paths = files.map((f) => docent().pathForFile(f))
      void importFolders(paths)
    }
    window.addEventListener('dragenter', onEnter)
    window.addEventListener('dragover', onOver)
    window.addEventListener('dragleave', onLeave)
    window.addEventListener('drop', onDrop)
    return () => {
      window.removeEventListener('dragenter', onEnter)
      window.removeEventListener('dragover', onOver)
      window.removeEventListener('dragleave', onLeave)
      window.removeEventListener('drop', onDrop)
    }
  }, [])

  if (!active) return null
  return (
    <div className="drop-overlay" data-testid="drop-overlay" aria-hidden="true">
      <div className="drop-card">
        <FolderIcon size={40} />
        <div className="drop-title">Drop a folder to add it to your library</div>
        <div className="drop-sub">Markdown, HTML, PDF, Word and text files inside it are indexed on this computer.</div>
      </div>
    </div>
  )
}
