import { xchacha20poly1305 } from '@noble/ciphers/chacha.js'
import { describe, expect, it } from 'vitest'
import { open, sealInto, TAG_BYTES } from './aead.js'

const hex = (s: string) => Uint8Array.from(s.match(/../g)!, (b) => Number.parseInt(b, 16))
const random = (n: number) => globalThis.crypto.getRandomValues(new Uint8Array(n))
const seal = (key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plain: Uint8Array) => {
  const out = new Uint8Array(plain.byteLength + TAG_BYTES)
  sealInto(key, nonce, aad, plain, out, 0)
  return out
}

describe('XChaCha20-Poly1305', () => {
  it('gives the test vector of draft-irtf-cfrg-xchacha (A.3.1)', () => {
    const plain = new TextEncoder().encode("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.")
    const key = Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i)
    const nonce = Uint8Array.from({ length: 24 }, (_, i) => 0x40 + i)
    const aad = hex('50515253c0c1c2c3c4c5c6c7')
    const sealed = seal(key, nonce, aad, plain)
    expect(Buffer.from(sealed).toString('hex')).toBe(
      'bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52e' +
        'c0875924c1c7987947deafd8780acf49',
    )
    expect(open(key, nonce, aad, sealed)).toEqual(plain)
  })

  it("seals byte for byte as @noble/ciphers' AEAD does, at every length around the block and tag boundaries", () => {
    for (const length of [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 311, 1000, 4097]) {
      for (const aadLength of [0, 5, 16, 29]) {
        const [key, nonce, aad, plain] = [random(32), random(24), random(aadLength), random(length)]
        const sealed = seal(key, nonce, aad, plain)
        expect(sealed).toEqual(xchacha20poly1305(key, nonce, aad).encrypt(plain))
        expect(open(key, nonce, aad, sealed)).toEqual(plain)
      }
    }
  })

  it('writes at an offset of a larger buffer and leaves the rest alone', () => {
    const [key, nonce, plain] = [random(32), random(24), random(50)]
    const out = new Uint8Array(10 + 50 + TAG_BYTES + 5).fill(7)
    sealInto(key, nonce, new Uint8Array(0), plain, out, 10)
    expect([...out.subarray(0, 10), ...out.subarray(10 + 50 + TAG_BYTES)]).toEqual(Array(15).fill(7))
    expect(open(key, nonce, new Uint8Array(0), out.subarray(10, 10 + 50 + TAG_BYTES))).toEqual(plain)
  })

  it('refuses a value with any byte changed, another nonce, key or context, or one shorter than a tag', () => {
    const [key, nonce, aad, plain] = [random(32), random(24), random(8), random(40)]
    const sealed = seal(key, nonce, aad, plain)
    for (let i = 0; i < sealed.byteLength; i++) {
      const altered = sealed.slice()
      altered[i]! ^= 1
      expect(() => open(key, nonce, aad, altered)).toThrow('invalid tag')
    }
    expect(() => open(random(32), nonce, aad, sealed)).toThrow('invalid tag')
    expect(() => open(key, random(24), aad, sealed)).toThrow('invalid tag')
    expect(() => open(key, nonce, random(8), sealed)).toThrow('invalid tag')
    expect(() => open(key, nonce, aad, sealed.subarray(0, TAG_BYTES - 1))).toThrow('invalid tag')
  })
})
