export { startSync } from './start-sync.js'
export { createStatusRegistry, type StatusRegistry, type StatusExtra } from './status-registry.js'
export type {
  Sync,
  SyncOptions,
  SyncStatus,
  SyncDetails,
  SyncErrorReason,
  SyncProblem,
  ConnectionStatus,
  Connector,
  ConnectorContext,
  Connection,
} from './sync-types.js'
export { websocketConnector, DEFAULT_MAX_FRAME_BYTES, type WebsocketConnectorOptions } from './websocket-connector.js'
export { muxConnector, type MuxConnector, type MuxConnectorOptions } from './mux-connector.js'
export type { RelayLinkOptions } from './reconnect.js'
export { encodeMuxFrame, decodeMuxFrame, MuxFrameType, MUX_PATH, type MuxFrame } from './mux-frames.js'
export { roomName, roomPath, canonicalRoomName, encodeRoomSegment, MAX_ROOM_NAME_LENGTH } from './room-name.js'
export { backoffDelay, type BackoffOptions } from './backoff.js'
export { CloseCode, ClientCloseCode, closeReasonOf, isPermanentCloseCode, type CloseCodeValue, type CloseReason } from './close-codes.js'
export {
  LOCAL_ORIGIN,
  createMirrorDoc,
  MIRRORED_KINDS,
  type MirrorDoc,
  type DocValue,
  type ReadResult,
  type UnreadableEntry,
  type MalformedEntry,
  type PublishResult,
  type StampJudge,
} from './mirror-doc.js'
export { deriveSyncKey, PBKDF2_ITERATIONS, type EncryptionOption, type ValueCipher } from './value-cipher.js'
export { createLoopbackNetwork, type LoopbackNetwork, type LoopbackOptions } from './loopback-network.js'
