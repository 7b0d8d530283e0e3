import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

// Paths resolve from this file, so the build works from any working directory.
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url))

export default defineConfig({
  root: here('.'),
  base: '/',
  publicDir: here('public'),
  build: {
    outDir: here('../../dist/web'),
    emptyOutDir: true,
    target: 'es2022',
    // The CSP allows only the dashboard's own files: no inline polyfill, no inlined assets.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080', '/healthz': 'http://127.0.0.1:8080' },
  },
})
