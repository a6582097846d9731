// The SDK's ready worker entry, exactly as an app uses it.
import '@engram/worker/host'
