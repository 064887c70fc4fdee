import { formatRelativeTime } from '../lib/format'
import { activeTurn, useChat } from '../stores/chat'
import { statusFor, useModels } from '../stores/models'
import { useNav } from '../stores/nav'
import { ChatIcon, GearIcon, PlusIcon, Spinner, TrashIcon } from './Icons'
import { LibrarySection } from './Library'

export function Sidebar() {
  const screen = useNav((s) => s.screen)
  const setScreen = useNav((s) => s.setScreen)
  const newThread = useChat((s) => s.newThread)
  const llm = useModels((s) => statusFor(s.statuses, 'llm'))
  const modelsLoaded = useModels((s) => s.loaded)

  return (
    <nav className="sidebar" aria-label="Library and conversations">
      <div className="sidebar-top">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">
            D
          </span>
          <span className="brand-name">Docent</span>
        </div>
        <button
          type="button"
          className="btn btn-primary btn-block"
          onClick={() => {
            newThread()
            setScreen('chat')
          }}
        >
          <PlusIcon size={15} /> New conversation
        </button>
      </div>
      <div className="sidebar-scroll">
        <LibrarySection />
        <ThreadsSection />
      </div>
      <div className="sidebar-footer">
        <button
          type="button"
          className={`nav-item${screen === 'models' ? ' active' : ''}`}
          aria-current={screen === 'models' ? 'page' : undefined}
          onClick={() => setScreen(screen === 'models' ? 'chat' : 'models')}
        >
          <GearIcon size={16} />
          <span>Models &amp; Settings</span>
          {modelsLoaded && !llm?.installed && (
            <span
              className="status-dot warn"
              title="The chat model is not installed: Docent shows passages instead of answers"
              aria-label="Chat model not installed"
            />
          )}
        </button>
      </div>
    </nav>
  )
}

function ThreadsSection() {
  const threads = useChat((s) => s.threads)
  const threadId = useChat((s) => s.threadId)
  const openThread = useChat((s) => s.openThread)
  const deleteThread = useChat((s) => s.deleteThread)
  // The conversation whose question is being answered is listed from the moment it is sent.
  const answering = useChat((s) => (activeTurn(s.turns) ? s.threadId : null))
  const screen = useNav((s) => s.screen)
  const setScreen = useNav((s) => s.setScreen)

  const onDelete = async (id: string, title: string) => {
    const ok = await useNav.getState().ask({
      title: 'Delete this conversation?',
      body: `“${title}” and its answers will be deleted. Your documents are not affected.`,
      confirmLabel: 'Delete',
      danger: true,
    })
    if (ok) await deleteThread(id)
  }

  return (
    <section className="sidebar-section" aria-labelledby="threads-heading">
      <div className="section-header">
        <h2 id="threads-heading">Conversations</h2>
      </div>
      {threads.length === 0 ? (
        <p className="muted small sidebar-empty">Your questions and answers will be kept here.</p>
      ) : (
        <ul className="thread-list">
          {threads.map((t) => {
            const current = t.id === threadId && screen === 'chat'
            return (
              <li key={t.id} className={`thread-item${current ? ' active' : ''}`}>
                <button
                  type="button"
                  className="thread-open"
                  aria-current={current ? 'true' : undefined}
                  onClick={() => {
                    setScreen('chat')
                    void openThread(t.id)
                  }}
                >
                  <ChatIcon size={14} />
                  <span className="thread-title">{t.title || 'Untitled conversation'}</span>
                  {answering === t.id ? (
                    <span className="thread-time">
                      <Spinner /> <span className="visually-hidden">being answered</span>
                    </span>
                  ) : (
                    <span className="thread-time">{formatRelativeTime(t.updated_at)}</span>
                  )}
                </button>
                <button
                  type="button"
                  className="icon-btn thread-delete"
                  aria-label={`Delete conversation ${t.title}`}
                  onClick={() => void onDelete(t.id, t.title)}
                >
                  <TrashIcon size={13} />
                </button>
              </li>
            )
          })}
        </ul>
      )}
    </section>
  )
}
