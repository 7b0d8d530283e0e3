import { expect, test } from 'vitest'
import { addItem, total } from './cart.js'

test('adds an item', () => {
  const cart = addItem(addItem([], { sku: 'mug', cents: 1200, quantity: 1 }), { sku: 'mug', cents: 1200, quantity: 2 })
  expect(cart).toEqual([{ sku: 'mug', cents: 1200, quantity: 3 }])
})

test('applies a coupon', () => {
  expect(total([{ sku: 'mug', cents: 1200, quantity: 2 }], 10)).toBe(2160)
})
