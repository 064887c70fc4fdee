import { useEffect, useRef } from 'react'
import { useNav } from '../stores/nav'
import { CloseIcon } from './Icons'

export function ProgressBar({
  value,
  max,
  label,
  indeterminate,
}: {
  value: number
  max: number
  label: string
  indeterminate?: boolean
}) {
  const pct = max > 0 ? Math.max(0, Math.min(100, (value / max) * 100)) : 0
  return (
    <div
      className={`progress${indeterminate ? ' progress-indeterminate' : ''}`}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={indeterminate ? undefined : max}
      aria-valuenow={indeterminate ? undefined : value}
    >
      <div className="progress-fill" style={indeterminate ? undefined : { width: `${pct}%` }} />
    </div>
  )
}

/** A modal confirm dialog driven by the nav store (`useNav.getState().ask(...)`). */
export function ConfirmDialog() {
  const confirm = useNav((s) => s.confirm)
  const settle = useNav((s) => s.settleConfirm)
  const cancelRef = useRef<HTMLButtonElement>(null)
  const lastFocus = useRef<Element | null>(null)

  useEffect(() => {
    if (!confirm) return
    lastFocus.current = document.activeElement
    cancelRef.current?.focus()
    return () => {
      if (lastFocus.current instanceof HTMLElement) lastFocus.current.focus()
    }
  }, [confirm])

  if (!confirm) return null
  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && settle(false)}>
      <div
        className="modal"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="confirm-title"
        aria-describedby="confirm-body"
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.stopPropagation()
            settle(false)
          }
          if (e.key === 'Tab') {
            // Keep focus inside the dialog.
            const buttons = Array.from(e.currentTarget.querySelectorAll('button'))
            const first = buttons[0]
            const last = buttons.at(-1)
            if (e.shiftKey && document.activeElement === first) {
              e.preventDefault()
              last?.focus()
            } else if (!e.shiftKey && document.activeElement === last) {
              e.preventDefault()
              first?.focus()
            }
          }
        }}
      >
        <h2 id="confirm-title">{confirm.title}</h2>
        <p id="confirm-body">{confirm.body}</p>
        <div className="modal-actions">
          <button ref={cancelRef} type="button" className="btn" onClick={() => settle(false)}>
            Cancel
          </button>
          <button type="button" className={`btn ${confirm.danger ? 'btn-danger' : 'btn-primary'}`} onClick={() => settle(true)}>
            {confirm.confirmLabel}
          </button>
        </div>
      </div>
    </div>
  )
}

export function Toasts() {
  const toasts = useNav((s) => s.toasts)
  const dismiss = useNav((s) => s.dismissToast)
  return (
    <div className="toasts" role="region" aria-label="Notifications" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} className={`toast toast-${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
          <span>{t.message}</span>
          <button type="button" className="icon-btn" aria-label="Dismiss notification" onClick={() => dismiss(t.id)}>
            <CloseIcon size={14} />
          </button>
        </div>
      ))}
    </div>
  )
}
