import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Bytes held in memory before the texts move to a temporary file (the JSON of ~40,000 tests). */
const MEMORY_BYTES = 64 << 20

/** The size of one block of memory, and of one write to the file. */
const BLOCK = 4 << 20

/**
 * Texts kept as UTF-8 in the order they come, and read back as bytes in any order: in memory (outside V8's heap,
 * which then has no strings to move) while they are few, in a temporary file once they pass `memoryBytes`, so
 * that a command over a million tests holds their sort keys, not their output. The file is read a text at a time
 * (one `pread`); `close` removes it.
 * @example const kept = new KeptTexts(); const i = kept.add('a'); kept.text(i) // 'a'; kept.close()
 */
export class KeptTexts {
  /** In memory: every block. In the file: the one being filled, written out when full. */
  #blocks: Buffer[] = []
  /** Where the block being filled starts in the whole, and how much of it is used. */
  #base = 0
  #used = 0
  /** Each text's offset in the whole, its length, and its block (read in memory only), with each block's offset. */
  #offsets: number[] = []
  #lengths: number[] = []
  #blockOf: number[] = []
  #blockBase: number[] = []
  #dir: string | null = null
  #fd: number | null = null
  #scratch = Buffer.alloc(0)

  constructor(
    private readonly memoryBytes = MEMORY_BYTES,
    private readonly blockBytes = BLOCK,
  ) {}

  /** Keeps `text`, and returns its index. */
  add(text: string): number {
    // At most three bytes per UTF-16 unit: written straight into the block when that surely fits.
    if (this.#blocks.length > 0 && text.length * 3 <= this.#room())
      return this.#record(this.#current().write(text, this.#used, 'utf8'))
    return this.addBytes(Buffer.from(text, 'utf8'))
  }

  /** Keeps a copy of `bytes` (UTF-8), and returns its index. */
  addBytes(bytes: Uint8Array): number {
    if (this.#blocks.length === 0 || bytes.length > this.#room()) this.#nextBlock(bytes.length)
    this.#current().set(bytes, this.#used)
    return this.#record(bytes.length)
  }

  /** The bytes kept at `index`: a view that the next call may reuse, to be copied or written before then. */
  bytes(index: number): Uint8Array {
    const length = this.#lengths[index]!
    if (this.#fd === null) {
      const block = this.#blockOf[index]!
      const start = this.#offsets[index]! - this.#blockBase[block]!
      return this.#blocks[block]!.subarray(start, start + length)
    }
    this.#writeBlock()
    if (this.#scratch.length < length) this.#scratch = Buffer.allocUnsafe(Math.max(length, 1 << 16))
    readSync(this.#fd, this.#scratch, 0, length, this.#offsets[index]!)
    return this.#scratch.subarray(0, length)
  }

  /** The text kept at `index`. */
  text(index: number): string {
    const b = this.bytes(index)
    return Buffer.from(b.buffer, b.byteOffset, b.length).toString('utf8')
  }

  /** Removes the temporary file, if one was made. */
  close(): void {
    if (this.#fd !== null) closeSync(this.#fd)
    if (this.#dir !== null) rmSync(this.#dir, { recursive: true, force: true })
    this.#fd = null
    this.#dir = null
    this.#blocks = []
  }

  #current(): Buffer {
    return this.#blocks[this.#blocks.length - 1]!
  }

  #room(): number {
    return this.#blocks.length === 0 ? 0 : this.#current().length - this.#used
  }

  #record(length: number): number {
    this.#offsets.push(this.#base + this.#used)
    this.#lengths.push(length)
    this.#blockOf.push(this.#blocks.length - 1)
    this.#used += length
    return this.#offsets.length - 1
  }

  /** Starts a block with room for `bytes`: a new one in memory, or the file's one reused once written out. */
  #nextBlock(bytes: number): void {
    if (this.#fd === null && this.#base + this.#used + bytes > this.memoryBytes) this.#spill()
    const size = Math.max(bytes, this.blockBytes)
    if (this.#fd !== null) {
      this.#writeBlock()
      if (this.#blocks.length === 0 || this.#current().length < size) this.#blocks = [Buffer.allocUnsafeSlow(size)]
      return
    }
    this.#base += this.#used
    this.#used = 0
    this.#blockBase.push(this.#base)
    this.#blocks.push(Buffer.allocUnsafeSlow(size))
  }

  /** Moves what memory holds to the file; from then on, one block is kept, for writing. */
  #spill(): void {
    this.#dir = mkdtempSync(join(tmpdir(), 'flakewatch-kept-'))
    this.#fd = openSync(join(this.#dir, 'texts'), 'w+')
    const last = this.#blocks.length - 1
    this.#blocks.forEach((block, i) => {
      if (i < last) writeSync(this.#fd!, block, 0, this.#blockBase[i + 1]! - this.#blockBase[i]!)
    })
    this.#blocks = last < 0 ? [] : [this.#blocks[last]!]
  }

  /** In the file: writes the block being filled at its place, and starts it afresh. */
  #writeBlock(): void {
    if (this.#used > 0) writeSync(this.#fd!, this.#current(), 0, this.#used, this.#base)
    this.#base += this.#used
    this.#used = 0
  }
}
