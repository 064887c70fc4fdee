import type { ReactElement, SVGProps } from 'react'

/** Small stroke icons (inline SVG, no icon font or network). Decorative unless given a title. */

type IconProps = SVGProps<SVGSVGElement> & { size?: number }

function base(size: number | undefined, props: SVGProps<SVGSVGElement>, children: ReactElement | ReactElement[]) {
  return (
    <svg
      width={size ?? 16}
      height={size ?? 16}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.8}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      {...props}
    >
      {children}
    </svg>
  )
}

export const FolderIcon = ({ size, ...p }: IconProps) =>
  base(size, p, <path d="M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z" />)
export const PlusIcon = ({ size, ...p }: IconProps) => base(size, p, <path d="M12 5v14M5 12h14" />)
export const RefreshIcon = ({ size, ...p }: IconProps) =>
  base(size, p, [
    <path key="a" d="M20 11a8 8 0 0 0-14.9-3.9L4 8" />,
    <path key="b" d="M4 4v4h4M4 13a8 8 0 0 0 14.9 3.9L20 16M20 20v-4h-4" />,
  ])
export const TrashIcon = ({ size, ...p }: IconProps) =>
  base(size, p, <path d="M4 7h16M10 11v6M14 11v6M6 7l1 12a2 2 0 0 0 2 2h6a2 2 0 0 0 2-2l1-12M9 7V4h6v3" />)
export const CloseIcon = ({ size, ...p }: IconProps) => base(size, p, <path d="M6 6l12 12M18 6L6 18" />)
export const SendIcon = ({ size, ...p }: IconProps) => base(size, p, <path d="M5 12h13M13 6l6 6-6 6" />)
export const StopIcon = ({ size, ...p }: IconProps) => base(size, p, <rect x="7" y="7" width="10" height="10" rx="1.5" />)
export const CopyIcon = ({ size, ...p }: IconProps) =>
  base(size, p, [<rect key="a" x="9" y="9" width="11" height="11" rx="2" />, <path key="b" d="M5 15V6a2 2 0 0 1 2-2h9" />])
export const RetryIcon = ({ size, ...p }: IconProps) => base(size, p, <path d="M4 12a8 8 0 1 0 2.3-5.7L4 8.6M4 4v4.6h4.6" />)
export const ChatIcon = ({ size, ...p }: IconProps) =>
  base(size, p, <path d="M5 5h14a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1h-8l-5 4v-4H5a1 1 0 0 1-1-1V6a1 1 0 0 1 1-1z" />)
export const GearIcon = ({ size, ...p }: IconProps) =>
  base(size, p, [
    <circle key="a" cx="12" cy="12" r="3" />,
    <path
      key="b"
      d="M19.4 15a1.7 1.7 0 0 0 .3 1.8l.1.1a2 2 0 1 1-2.8 2.8l-.1-.1a1.7 1.7 0 0 0-1.8-.3 1.7 1.7 0 0 0-1 1.5V21a2 2 0 1 1-4 0v-.1a1.7 1.7 0 0 0-1.1-1.5 1.7 1.7 0 0 0-1.8.3l-.1.1a2 2 0 1 1-2.8-2.8l.1-.1a1.7 1.7 0 0 0 .3-1.8 1.7 1.7 0 0 0-1.5-1H3a2 2 0 1 1 0-4h.1a1.7 1.7 0 0 0 1.5-1.1 1.7 1.7 0 0 0-.3-1.8l-.1-.1a2 2 0 1 1 2.8-2.8l.1.1a1.7 1.7 0 0 0 1.8.3H9a1.7 1.7 0 0 0 1-1.5V3a2 2 0 1 1 4 0v.1a1.7 1.7 0 0 0 1 1.5 1.7 1.7 0 0 0 1.8-.3l.1-.1a2 2 0 1 1 2.8 2.8l-.1.1a1.7 1.7 0 0 0-.3 1.8V9a1.7 1.7 0 0 0 1.5 1H21a2 2 0 1 1 0 4h-.1a1.7 1.7 0 0 0-1.5 1z"
    />,
  ])
export const ExternalIcon = ({ size, ...p }: IconProps) =>
  base(size, p, <path d="M14 4h6v6M20 4l-9 9M18 14v5a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V7a1 1 0 0 1 1-1h5" />)
export const DocIcon = ({ size, ...p }: IconProps) =>
  base(size, p, [<path key="a" d="M6 3h8l4 4v14H6z" />, <path key="b" d="M14 3v4h4M9 12h6M9 16h6" />])
export const CheckIcon = ({ size, ...p }: IconProps) => base(size, p, <path d="M5 12l5 5 9-10" />)
export const AlertIcon = ({ size, ...p }: IconProps) =>
  base(size, p, [<path key="a" d="M12 3l9.5 17H2.5z" />, <path key="b" d="M12 10v4M12 17.5v.01" />])
export const InfoIcon = ({ size, ...p }: IconProps) =>
  base(size, p, [<circle key="a" cx="12" cy="12" r="9" />, <path key="b" d="M12 11v5M12 8v.01" />])
export const SearchIcon = ({ size, ...p }: IconProps) =>
  base(size, p, [<circle key="a" cx="11" cy="11" r="6.5" />, <path key="b" d="M20 20l-4.2-4.2" />])
export const ChevronIcon = ({ size, ...p }: IconProps) => base(size, p, <path d="M6 9l6 6 6-6" />)
export const DownloadIcon = ({ size, ...p }: IconProps) => base(size, p, <path d="M12 4v11M7 10l5 5 5-5M5 20h14" />)
export const TraceIcon = ({ size, ...p }: IconProps) =>
  base(size, p, [<path key="a" d="M4 19V5M4 19h16" />, <path key="b" d="M8 15l3-4 3 2 5-6" />])
export const SparkIcon = ({ size, ...p }: IconProps) =>
  base(size, p, <path d="M12 3l1.8 5.2L19 10l-5.2 1.8L12 17l-1.8-5.2L5 10l5.2-1.8z" />)

export function Spinner({ label }: { label?: string }) {
  return (
    <span className="spinner" role={label ? 'status' : undefined} aria-label={label} aria-hidden={label ? undefined : true} />
  )
}
