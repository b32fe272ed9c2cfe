/**
 * A Liquid loop that only a time limit ends. The range is allocated once and then iterated, so
 * liquidjs's allocation counter (memoryLimit) never stops it. A range literal inside a loop is
 * counted again on every pass: that ends with "memory alloc limit exceeded" after a fixed
 * number of iterations, which a fast machine reaches before the time-out.
 */
export const ENDLESS_LIQUID_LOOP =
  '{% assign n = (1..100000) %}{% for i in n %}{% for j in n %}{% endfor %}{% endfor %}';
