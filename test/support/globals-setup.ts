// The store tests' second run: IndexedDB and IDBKeyRange as globals, the way a browser app has them.
import 'fake-indexeddb/auto'

process.env.ENGRAM_TEST_GLOBALS = '1'
