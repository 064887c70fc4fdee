export * from './types'
export * from './catalog'
export {
  ChecksumError,
  DownloadAbortedError,
  DownloadFailedError,
  HttpStatusError,
  downloadFile,
  type DownloadFileOptions,
  type DownloadProgress,
  type DownloadResult,
} from './download'
export { DEFAULT_HUB_ENDPOINT, resolveUrl } from './hub'
export {
  ModelManager,
  ModelManagerError,
  PinMismatchError,
  hashFile,
  type DownloadModelOptions,
  type ModelDownloadProgress,
  type ModelManagerOptions,
} from './manager'
