/** The fictional shop's cart: just enough code for the example project's tests to test something. */
export interface Line {
  sku: string
  cents: number
  quantity: number
}

export function addItem(cart: Line[], line: Line): Line[] {
  const same = cart.find((l) => l.sku === line.sku)
  if (!same) return [...cart, line]
  return cart.map((l) => (l === same ? { ...l, quantity: l.quantity + line.quantity } : l))
}

export function total(cart: Line[], couponPercent = 0): number {
  const gross = cart.reduce((sum, l) => sum + l.cents * l.quantity, 0)
  return Math.round(gross * (1 - couponPercent / 100))
}
