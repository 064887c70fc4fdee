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
  chooseDownloadFetch,
  envProxyFetch,
  proxySettingsFromEnv,
  type DownloadFetch,
  type DownloadRoute,
  type RuntimeFacts,
} from './network'
export { ModelManagerError, PinMismatchError } from './errors'
export { hashFile } from './files'
export type { ModelDownloadProgress } from './download-model'
export { ModelManager, type DownloadModelOptions, type ModelManagerOptions } from './manager'
