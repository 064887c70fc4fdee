import { useViewer } from '../stores/viewer'
import { CloseIcon } from './Icons'
import { SourceViewer } from './SourceViewer'
import { TracePanel } from './TracePanel'

export function RightPanel() {
  const panel = useViewer((s) => s.panel)
  const source = useViewer((s) => s.source)
  const trace = useViewer((s) => s.trace)
  const showPanel = useViewer((s) => s.showPanel)
  const close = useViewer((s) => s.close)
  if (!panel) return null
  return (
    <aside className="side-panel" aria-label={panel === 'source' ? 'Source viewer' : 'Answer trace'}>
      <div className="panel-bar">
        <div className="tabs" role="tablist" aria-label="Panel">
          <button
            type="button"
            role="tab"
            aria-selected={panel === 'source'}
            className="tab"
            disabled={!source}
            onClick={() => showPanel('source')}
          >
            Source
          </button>
          <button
            type="button"
            role="tab"
            aria-selected={panel === 'trace'}
            className="tab"
            disabled={!trace}
            onClick={() => showPanel('trace')}
          >
            Trace
          </button>
        </div>
        <button type="button" className="icon-btn" aria-label="Close panel" onClick={close}>
          <CloseIcon size={16} />
        </button>
      </div>
      <div className="panel-body" role="tabpanel">
        {panel === 'source' ? <SourceViewer /> : <TracePanel />}
      </div>
    </aside>
  )
}
