// Host test of klap/chunk.cuh (no GPU: the launches are recorded, not made): host_chunked cuts a
// host launch into chunks that cover every block of the grid exactly once, in block order, each at
// most host_chunk_blocks blocks; a grid that fits, or a configuration the launch itself rejects, is
// launched once as written; chunk_block gives each block of a chunk its original (x, y, z).
#include <cstdio>
#include <vector>
#include "klap/klap.cuh"

static int failures = 0;
#define EXPECT(c, ...)                         \
  do {                                         \
    if (!(c)) {                                \
      std::printf("chunk_split: FAIL: " __VA_ARGS__); \
      std::printf("\n");                       \
      ++failures;                              \
    }                                          \
  } while (0)

struct launch_seen {
  dim3 grid;
  bool whole;
  klap::chunk c;
};

// Runs host_chunked over grid x block with `need` per block, recording the launches.
static std::vector<launch_seen> record(dim3 grid, dim3 block, klap::chunk_need need) {
  std::vector<launch_seen> seen;
  klap::host_chunked(grid, block, [&](dim3) { return need; }, [&](dim3 g, const klap::chunk* c) {
    seen.push_back(launch_seen{g, c == nullptr, c ? *c : klap::make_chunk(dim3(1u, 1u, 1u), 0ull)});
  });
  return seen;
}

// The need of one block such that host_chunk_blocks allows `per` blocks per chunk (by bytes).
static klap::chunk_need bytes_for(unsigned long long per) {
  return klap::chunk_need{static_cast<unsigned long long>(KLAP_POOL_SIZE_BYTES) / 2ull / per, 0ull};
}

static void covers(dim3 grid, unsigned long long want) {
  const unsigned long long blocks = static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  // (the byte share divided by the bytes per block: `want` or a little more, by rounding)
  const unsigned long long per = klap::host_chunk_blocks(blocks, bytes_for(want));
  EXPECT(per >= want && per <= want + want / 100 + 1, "per %llu for %llu", per, want);
  std::vector<launch_seen> seen = record(grid, dim3(256), bytes_for(want));
  EXPECT(seen.size() == (blocks + per - 1) / per, "grid (%u,%u,%u) per %llu: %zu launches", grid.x, grid.y, grid.z, per,
         seen.size());
  std::vector<int> hit(blocks, 0);
  unsigned long long next = 0;
  for (const launch_seen& s : seen) {
    EXPECT(!s.whole, "a chunked grid launched whole");
    EXPECT(s.c.first == next, "chunk starts at %llu, expected %llu", s.c.first, next);
    EXPECT(s.grid.y == 1u && s.grid.z == 1u && s.grid.x >= 1u && s.grid.x <= per, "chunk grid (%u,%u,%u)", s.grid.x,
           s.grid.y, s.grid.z);
    EXPECT(s.c.grid.x == grid.x && s.c.grid.y == grid.y && s.c.grid.z == grid.z, "chunk carries another grid");
    const uint3 first = klap::chunk_block(s.c, 0u);
    EXPECT(first.x == s.c.start.x && first.y == s.c.start.y && first.z == s.c.start.z, "chunk's start is not its block 0");
    for (unsigned b = 0; b < s.grid.x; ++b) {
      const uint3 o = klap::chunk_block(s.c, b);
      EXPECT(o.x < grid.x && o.y < grid.y && o.z < grid.z, "block (%u,%u,%u) outside the grid", o.x, o.y, o.z);
      const unsigned long long lin = o.x + static_cast<unsigned long long>(grid.x) * (o.y + static_cast<unsigned long long>(grid.y) * o.z);
      EXPECT(lin == next + b, "block %llu of the grid maps to linear %llu", next + b, lin);
      if (lin < blocks) ++hit[lin];
    }
    next += s.grid.x;
  }
  EXPECT(next == blocks, "chunks cover %llu of %llu blocks", next, blocks);
  for (unsigned long long i = 0; i < blocks; ++i) EXPECT(hit[i] == 1, "block %llu launched %d times", i, hit[i]);
}

int main() {
  // fits: launched once as written, with the grid as given
  {
    std::vector<launch_seen> seen = record(dim3(100, 2, 1), dim3(256), bytes_for(200));
    EXPECT(seen.size() == 1 && seen[0].whole && seen[0].grid.x == 100 && seen[0].grid.y == 2, "a fitting grid is one launch");
    seen = record(dim3(1 << 20), dim3(256), klap::chunk_need{0ull, 0ull});
    EXPECT(seen.size() == 1 && seen[0].whole, "a grid that needs nothing is one launch");
  }
  // configurations the launch rejects keep their one launch (and its error)
  for (dim3 bad_block : {dim3(0), dim3(2048), dim3(32, 32, 2)}) {
    std::vector<launch_seen> seen = record(dim3(1000), bad_block, bytes_for(1));
    EXPECT(seen.size() == 1 && seen[0].whole, "a rejected block (%u,%u,%u) is one launch", bad_block.x, bad_block.y, bad_block.z);
  }
  {
    std::vector<launch_seen> seen = record(dim3(0, 5, 1), dim3(256), bytes_for(1));
    EXPECT(seen.size() == 1 && seen[0].whole && seen[0].grid.x == 0, "an empty grid is one launch");
  }
  // chunks: 1-D, 2-D, 3-D grids, sizes that divide and do not
  covers(dim3(10), 3);
  covers(dim3(12), 4);
  covers(dim3(7, 5), 4);
  covers(dim3(5, 3, 4), 7);
  covers(dim3(3, 1, 9), 1);
  covers(dim3(65536), 3276);
  covers(dim3(1, 70000), 30000);
  covers(dim3(3, 65535, 2), 100000);
  // grids of more than 2^32 blocks: chunk_block agrees with the 64-bit numbering
  {
    const dim3 big(0x7FFFFFFFu, 65535u, 3u);
    for (unsigned long long first : {0ull, 0x7FFFFFFEull, 0x7FFFFFFFull * 65535ull - 5ull, 0x7FFFFFFFull * 65535ull * 2ull + 7ull}) {
      const klap::chunk c = klap::make_chunk(big, first);
      for (unsigned local : {0u, 1u, 4u, 0x7FFFFFFEu}) {
        const unsigned long long b = first + local;
        if (b >= 0x7FFFFFFFull * 65535ull * 3ull) continue;
        const uint3 o = klap::chunk_block(c, local);
        EXPECT(o.x == b % big.x && o.y == (b / big.x) % big.y && o.z == b / (static_cast<unsigned long long>(big.x) * big.y),
               "block %llu of a grid of more than 2^32 blocks", b);
      }
    }
  }
  // the limits: the pending-launch share, at least one block per chunk, at most 2^31-1
  {
    const unsigned long long share = static_cast<unsigned long long>(KLAP_PENDING_LAUNCH_LIMIT) * KLAP_PENDING_BUDGET_PERCENT / 100ull;
    EXPECT(klap::host_chunk_blocks(1ull << 20, klap::chunk_need{0ull, 8ull}) == share / 8ull, "pending share per chunk");
    EXPECT(klap::host_chunk_blocks(1ull << 20, klap::chunk_need{1ull << 40, 1ull}) == 1ull, "at least one block");
    EXPECT(klap::host_chunk_blocks(1ull << 40, klap::chunk_need{0ull, 0ull}) == 0x7FFFFFFFull, "at most 2^31-1 blocks");
    EXPECT(klap::host_chunk_blocks(10ull, bytes_for(4)) == 4ull, "bytes share per chunk");
  }
  if (failures != 0) {
    std::printf("chunk_split: %d failures\n", failures);
    return 1;
  }
  std::printf("chunk_split: PASS\n");
  return 0;
}
