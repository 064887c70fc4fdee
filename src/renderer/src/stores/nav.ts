import { create } from 'zustand'

/** App-level navigation and transient feedback: which screen is shown, toasts, the confirm dialog. */

export type Screen = 'chat' | 'models'

export interface Toast {
  id: number
  kind: 'info' | 'error'
  message: string
}

export interface ConfirmRequest {
  title: string
  body: string
  confirmLabel: string
  danger?: boolean
  resolve: (ok: boolean) => void
}

interface NavState {
  screen: Screen
  toasts: Toast[]
  confirm: ConfirmRequest | null
  setScreen(screen: Screen): void
  notify(message: string, kind?: Toast['kind']): void
  dismissToast(id: number): void
  /** Shows the confirm dialog and resolves with the person's choice. */
  ask(req: Omit<ConfirmRequest, 'resolve'>): Promise<boolean>
  settleConfirm(ok: boolean): void
}

let nextToast = 1

export const useNav = create<NavState>()((set, get) => ({
  screen: 'chat',
  toasts: [],
  confirm: null,
  setScreen: (screen) => set({ screen }),
  notify: (message, kind = 'info') => {
    const id = nextToast++
    set((s) => ({ toasts: [...s.toasts.slice(-3), { id, kind, message }] }))
    setTimeout(() => get().dismissToast(id), kind === 'error' ? 8000 : 4000)
  },
  dismissToast: (id) => set((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) })),
  ask: (req) =>
    new Promise<boolean>((resolve) => {
      get().confirm?.resolve(false)
      set({ confirm: { ...req, resolve } })
    }),
  settleConfirm: (ok) => {
    const c = get().confirm
    set({ confirm: null })
    c?.resolve(ok)
  },
}))
