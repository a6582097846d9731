/** The check of a connection's `encryption` option, loaded only by a connection that passes one. */
export { checkEncryptionOption } from '@engram/core'
