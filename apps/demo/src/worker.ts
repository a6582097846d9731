// The SDK's ready-made worker entry: opens memory (and sync) inside this worker.
import '@engram/worker/host'
