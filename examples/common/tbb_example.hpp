// tbb_example.hpp: helpers shared by the oneTBB examples for their analytic values.
#pragma once

#include "work.h"

// The pieces the simple partitioner makes of `size` iterations with grainsize g (as
// blocked_range splits: floor(size/2) on the left, the rest on the right, while size > g):
// their number is added to `chunks`, and `largest` is raised to the largest.
inline void count_chunks(unsigned long size, unsigned long g, unsigned long& chunks,
                         unsigned long& largest) {
  if (size > g) {
    count_chunks(size / 2, g, chunks, largest);
    count_chunks(size - size / 2, g, chunks, largest);
    return;
  }
  chunks++;
  if (size > largest) largest = size;
}

// The largest piece of n iterations with grainsize g (0 for n = 0).
inline unsigned long largest_chunk(unsigned long n, unsigned long g) {
  unsigned long chunks = 0, largest = 0;
  if (n > 0) count_chunks(n, g, chunks, largest);
  return largest;
}

// A serial stretch of `units` units with a little real computation (seeded so that the two
// stretches of a program differ).
inline unsigned long long serial_part(unsigned long units, unsigned long seed) {
  unsigned long long acc = 0;
  for (unsigned long i = 1; i <= 1000; i++) acc += (i * i + seed) % 7;
  tl_work(units);
  return acc;
}
