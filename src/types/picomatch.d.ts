// picomatch ships no types and @types/picomatch is not a dependency: the one call flakewatch makes, typed.
declare module 'picomatch' {
  interface PicomatchOptions {
    dot?: boolean
    nocase?: boolean
  }
  function picomatch(glob: string, options?: PicomatchOptions): (input: string) => boolean
  export default picomatch
}
