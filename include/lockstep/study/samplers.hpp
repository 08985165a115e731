// lockstep/study/samplers.hpp — the values of study member i: grid points crossed with draws from a
// random, Sobol or Latin-hypercube sampler, each a pure function of (plan, i).
//
// Member numbering is the contract of sampling_plan.hpp:
//     i = (replicate * members + draw) * G + grid_point.
// The drawn dimensions (every dimension that is not a grid) see the drawn point with index
//     j = replicate * members + draw,
// the same for all G grid points: the sampler's point set is crossed with the grid (common random
// numbers across grid points), as the header's "Cartesian product" reading requires. Drawn
// dimensions are numbered s = 0, 1, ... in the order they are written, skipping grid dimensions.
//
// Nothing here keeps a stream: every value comes from Random123's Philox4x64-10 (Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3", SC 2011) on a key and counter built from the seed
// and indices (docs/DESIGN-NOTES.md, "Determinism"), so members may be computed in any order, by any thread, chunk
// or rank, and come out bitwise the same. sample_member allocates nothing; the Sobol direction
// numbers are extracted from Boost once per process (a function-local static).
//
// Uniform (0, 1) numbers. A 64-bit word w becomes u = (0.5 + (w >> 12)) * 2^-52
// (Random123's u01fixedpt_open_open_64_double): the midpoints {1, 3, ..., 2^53 - 1} / 2^53 of the
// 2^52 cells of width 2^-52, so u is never 0 or 1 (quantile functions stay finite) and 2^-53 <= u
// <= 1 - 2^-53. Sobol points are 52-bit integers x and map through the same function (x << 12),
// i.e. to the midpoint of their 2^-52 cell.
//
// Philox keys and counters (key = {k0, k1}, counter = {tag, c1, c2, c3}):
//   random       key {seed, j},          counter {tag_random, s, 0, 0}
//   lhs jitter   key {seed, j},          counter {tag_lhs_jitter, s, 0, 0}
//   lhs permute  key {seed, replicate},  counter {tag_lhs_permute, s, feistel round, half block}
//   sobol shift  key {seed, replicate},  counter {tag_sobol_shift, s, 0, 0}
// The tags keep the four uses on disjoint counters, so no two uses ever share a Philox output.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Random123/philox.h>
#include <Random123/u01fixedpt.h>
#include <boost/math/distributions/lognormal.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/random/sobol.hpp>

#include "lockstep/study/sampling_plan.hpp"

namespace lockstep::study {

// ---- building blocks (public so the tests and sobol_dump can check them) -----------------------

// Bits of a Sobol coordinate: points are integers over 2^52, exact for point indices below 2^52
// (Sobol coordinates of point k < 2^m are dyadic rationals with at most m bits).
inline constexpr int sobol_bits = 52;

// Boost's table (boost/random/detail/sobol_table.hpp): Joe & Kuo 2008 "Constructing Sobol sequences
// with better two-dimensional projections" (new-joe-kuo-6.21201), cut at 3667 dimensions.
inline constexpr int sobol_max_dimension = static_cast<int>(boost::random::default_sobol_table::max_dimension);

// One Philox4x64-10 output word: word 0 of Philox(counter {tag, c1, c2, c3}, key {k0, k1}).
inline std::uint64_t philox_word(std::uint64_t k0, std::uint64_t k1, std::uint64_t tag, std::uint64_t c1,
                                 std::uint64_t c2 = 0, std::uint64_t c3 = 0) {
  const r123::Philox4x64 rng{};
  const r123::Philox4x64::ctr_type counter = {{tag, c1, c2, c3}};
  const r123::Philox4x64::key_type key = {{k0, k1}};
  return rng(counter, key).v[0];
}

// The open-interval mapping described at the top of the file (Random123/u01fixedpt.h).
inline double unit_open(std::uint64_t word) { return u01fixedpt_open_open_64_double(word); }

namespace detail {

// Counter tags ("rand", "ljit", "lprm", "sshf" in ASCII) separating the uses of Philox.
inline constexpr std::uint64_t tag_random = 0x72616e64;
inline constexpr std::uint64_t tag_lhs_jitter = 0x6c6a6974;
inline constexpr std::uint64_t tag_lhs_permute = 0x6c70726d;
inline constexpr std::uint64_t tag_sobol_shift = 0x73736866;

// Direction numbers v[r][s] (bit r of the Gray code, Sobol dimension s) as 52-bit integers, taken
// from Boost rather than written here. Boost keeps them in a protected lattice
// (boost/random/sobol.hpp, sobol_lattice; boost/random/detail/gray_coded_qrng.hpp), but its public
// seed() exposes them: gray_coded_qrng::seed(n) sets the state to the XOR of the direction numbers
// selected by the Gray code of n + 1 (Boost skips the zero point), and the Gray code of
// n + 1 = 2^(r+1) - 1 is 2^r, so after seed(2^(r+1) - 2) the next `dimension` outputs are v[r][0..).
// Built once for all 3667 dimensions (~1.5 MB, ~3.5 ms) so that no member allocates.
//
// Why not position a Boost engine per member: seed(n) (and discard(z), which calls seed(seq + z))
// is already direct — it zeroes the state and XORs one direction vector per set bit of the Gray
// code, O(dims x log2 n) — but every engine owns std::vectors (the w x dims lattice and the state)
// and builds the lattice from the polynomial table on construction: about 1 us per member at
// dims = 4 (measured with g++ 12 -O2), all of it allocation and table setup, and a thread-unsafe
// object to share otherwise. The members below only read this table.
class sobol_directions {
 public:
  sobol_directions() : v_(static_cast<std::size_t>(sobol_bits) * sobol_max_dimension) {
    boost::random::sobol_engine<std::uint64_t, sobol_bits> engine(sobol_max_dimension);
    for (int r = 0; r < sobol_bits; ++r) {
      engine.seed((std::uint64_t{2} << r) - 2);
      for (int s = 0; s < sobol_max_dimension; ++s) v_[static_cast<std::size_t>(r) * sobol_max_dimension + s] = engine();
    }
  }
  const std::uint64_t* row(int r) const { return v_.data() + static_cast<std::size_t>(r) * sobol_max_dimension; }

 private:
  std::vector<std::uint64_t> v_;
};

inline const sobol_directions& sobol_table() {
  static const sobol_directions table;  // thread-safe initialization (C++11 [stmt.dcl]/4)
  return table;
}

}  // namespace detail

// Coordinate s (0-based Sobol dimension, s < sobol_max_dimension) of the unrandomized Sobol point k
// (k < 2^52) as a 52-bit integer x (coordinate = x / 2^52). Numbered like
// scipy.stats.qmc.Sobol(d, scramble=False): point 0 is the origin, point k is the XOR of the
// direction numbers selected by the bits of the Gray code k ^ (k >> 1) (Antonov & Saleev 1979).
// Boost's engine starts at our point 1 (it skips the zero point; its output n is our point n + 1);
// keeping the origin matters because the first 2^m points from index 0 form a (t, m, s)-net and
// the 2^m points after it do not (Owen 2022, "On dropping the first Sobol' point"). Cost O(log2 k),
// independent of the order in which points are asked for.
inline std::uint64_t sobol_coordinate_bits(std::uint64_t k, int s) {
  const detail::sobol_directions& table = detail::sobol_table();
  const std::uint64_t gray = k ^ (k >> 1);
  const int width = std::bit_width(gray);
  std::uint64_t x = 0;
  // Masked rather than branching on each Gray bit: the bits are unpredictable, the mask is not.
  for (int r = 0; r < width; ++r) x ^= table.row(r)[s] & (std::uint64_t{0} - ((gray >> r) & 1u));
  return x;
}

// Unrandomized Sobol point k in dimensions 1..dims as doubles in [0, 1) — exact (dyadic
// rationals), so comparable bit for bit with scipy.
inline void sobol_point(std::uint64_t k, int dims, double* out) {
  for (int s = 0; s < dims; ++s) out[s] = std::ldexp(static_cast<double>(sobol_coordinate_bits(k, s)), -sobol_bits);
}

// Image of `index` under a pseudo-random permutation of {0, ..., n - 1} keyed by (seed, replicate,
// dimension s), evaluated at one index without building the permutation — the idea of Kensler 2013,
// "Correlated Multi-Jittered Sampling" (Pixar TM 13-01), with a different bijection: a 4-round
// Feistel network (Luby & Rackoff 1988) on 2h bits with Philox as the round function, 2^(2h) the
// smallest even power of two >= n, restricted to {0, ..., n - 1} by cycle walking (Black & Rogaway
// 2002, "Ciphers with arbitrary finite domains"): apply the bijection until the value falls below n.
// The walk stays on the cycle through `index`, so it ends, after fewer than 4 steps on average.
inline long lhs_permute(long index, long n, std::uint64_t seed, std::uint64_t replicate, std::uint64_t s) {
  if (n <= 1) return 0;
  int half = 1;
  while ((std::uint64_t{1} << (2 * half)) < static_cast<std::uint64_t>(n)) ++half;
  const std::uint64_t mask = (std::uint64_t{1} << half) - 1;
  std::uint64_t x = static_cast<std::uint64_t>(index);
  do {
    std::uint64_t left = x >> half;
    std::uint64_t right = x & mask;
    for (std::uint64_t round = 0; round < 4; ++round) {
      const std::uint64_t next = left ^ (philox_word(seed, replicate, detail::tag_lhs_permute, s, round, right) & mask);
      left = right;
      right = next;
    }
    x = (left << half) | right;
  } while (x >= static_cast<std::uint64_t>(n));
  return static_cast<long>(x);
}

// u in (0, 1) to the distribution (not grid). A zero standard deviation gives the location exactly
// (Boost.Math rejects a zero scale). Quantiles come from Boost.Math; no inverse CDF is written here.
inline double from_unit(const distribution& dist, double u) {
  switch (dist.kind) {
    case distribution_kind::uniform:
      return dist.a + (dist.b - dist.a) * u;
    case distribution_kind::normal:
      if (dist.b == 0.0) return dist.a;
      return boost::math::quantile(boost::math::normal_distribution<double>(dist.a, dist.b), u);
    case distribution_kind::lognormal:
      if (dist.b == 0.0) return std::exp(dist.a);
      return boost::math::quantile(boost::math::lognormal_distribution<double>(dist.a, dist.b), u);
    case distribution_kind::grid:
      break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// ---- Saltelli's design (study/sensitivity_indices.hpp says what it is for) ----------------------

// The shape of Saltelli's design: k inputs, and whether the rows hold the B_A^(i) points that the
// second-order indices need.
struct saltelli_design {
  int inputs = 1;
  bool second_order = false;

  // The points of one design row: k + 2, or 2k + 2 with second order.
  int slots() const { return second_order ? 2 * inputs + 2 : inputs + 2; }
};

// Whether coordinate `input` of the point in `slot` of a design row comes from B_j (else from A_j).
inline bool saltelli_takes_b(const saltelli_design& design, int slot, int input) {
  const int k = design.inputs;
  if (slot == 0) return false;                     // A_j
  if (slot == design.slots() - 1) return true;     // B_j
  if (slot <= k) return input == slot - 1;         // A_B^(i)_j, i = slot - 1
  return input != slot - 1 - k;                    // B_A^(i)_j, i = slot - 1 - k
}

// ---- the plan's shape ------------------------------------------------------------------------------

// G: the number of grid points (1 when no dimension is a grid).
inline long grid_size(const sampling_plan& plan) {
  long g = 1;
  for (const varied_input& v : plan.vary)
    if (v.dist.kind == distribution_kind::grid) g *= static_cast<long>(v.dist.grid.size());
  return g;
}

// Number of dimensions the sampler draws (all but the grids).
inline int drawn_dimension_count(const sampling_plan& plan) {
  int n = 0;
  for (const varied_input& v : plan.vary) n += v.dist.kind != distribution_kind::grid;
  return n;
}

// A plan that varies at least one entry, every one on a grid: G members, one per grid point. A plan that
// varies nothing is not a grid: it has `members` x `replicates` identical members.
inline bool is_pure_grid(const sampling_plan& plan) { return !plan.vary.empty() && drawn_dimension_count(plan) == 0; }

// G x members x replicates, or G for a pure grid. The plan must pass check_plan.
inline long member_count(const sampling_plan& plan) {
  const long g = grid_size(plan);
  return is_pure_grid(plan) ? g : g * plan.members * plan.replicates;
}

inline long grid_point_of(const sampling_plan& plan, long i) { return i % grid_size(plan); }

inline long draw_of(const sampling_plan& plan, long i) {
  return is_pure_grid(plan) ? 0 : (i / grid_size(plan)) % plan.members;
}

inline int replicate_of(const sampling_plan& plan, long i) {
  return is_pure_grid(plan) ? 0 : static_cast<int>(i / grid_size(plan) / plan.members);
}

// "" when the plan is valid, else why not (naming the dimension).
inline std::string check_plan(const sampling_plan& plan) {
  const auto where = [](std::size_t k, const varied_input& v) {
    std::string s = "vary[";  // appended, not "literal" + string: GCC 12 false -Wrestrict (bug 105329)
    s += std::to_string(k);
    s += "] '";
    s += v.name;
    s += "': ";
    return s;
  };
  constexpr long long_max = std::numeric_limits<long>::max();
  long g = 1;
  int drawn = 0;
  for (std::size_t k = 0; k < plan.vary.size(); ++k) {
    const varied_input& v = plan.vary[k];
    const distribution& d = v.dist;
    switch (d.kind) {
      case distribution_kind::grid:
        if (d.grid.empty()) return where(k, v) + "empty grid";
        for (double x : d.grid)
          if (!std::isfinite(x)) return where(k, v) + "non-finite grid value";
        if (g > long_max / static_cast<long>(d.grid.size())) return where(k, v) + "grid too large (overflows long)";
        g *= static_cast<long>(d.grid.size());
        continue;
      case distribution_kind::uniform:
        if (!std::isfinite(d.a) || !std::isfinite(d.b)) return where(k, v) + "non-finite uniform bounds";
        if (d.a > d.b) return where(k, v) + "uniform lower > upper";
        if (!std::isfinite(d.b - d.a)) return where(k, v) + "uniform width upper - lower overflows";
        break;
      case distribution_kind::normal:
      case distribution_kind::lognormal:
        if (!std::isfinite(d.a) || !std::isfinite(d.b)) return where(k, v) + "non-finite location or scale";
        if (d.b < 0.0) return where(k, v) + "standard deviation < 0";
        break;
      default:
        return where(k, v) + "unknown distribution kind " + std::to_string(static_cast<int>(d.kind));
    }
    ++drawn;
    if (plan.sampler == sampler_kind::grid) return where(k, v) + "sampler 'grid' needs every dimension to be a grid";
  }
  switch (plan.sampler) {
    case sampler_kind::random:
    case sampler_kind::sobol:
    case sampler_kind::lhs:
    case sampler_kind::grid:
    case sampler_kind::saltelli:
      break;
    default:
      return "unknown sampler kind " + std::to_string(static_cast<int>(plan.sampler));
  }
  if (plan.sampler == sampler_kind::saltelli && drawn == 0) return "saltelli: no input is drawn";
  if (drawn == 0) return "";  // a pure grid ignores members and replicates
  if (plan.members <= 0) return "members must be > 0";
  if (plan.replicates <= 0) return "replicates must be > 0";
  if (plan.sampler == sampler_kind::sobol) {
    if (drawn > sobol_max_dimension)
      return "sobol: " + std::to_string(drawn) + " drawn dimensions, the direction numbers cover " +
             std::to_string(sobol_max_dimension);
    if (plan.members > (long{1} << sobol_bits)) return "sobol: members must be <= 2^52";
  }
  if (plan.sampler == sampler_kind::saltelli) {
    const saltelli_design design{drawn, plan.second_order};
    if (2 * drawn > sobol_max_dimension)
      return "saltelli: " + std::to_string(drawn) + " drawn dimensions, the direction numbers cover " +
             std::to_string(sobol_max_dimension / 2);
    const long rows = plan.members / design.slots();
    if (plan.members % design.slots() != 0 || !std::has_single_bit(static_cast<unsigned long>(rows)) ||
        rows > (long{1} << sobol_bits))
      return "saltelli: members must be N x " + std::to_string(design.slots()) +
             " (the points of a design row) with N a power of two, at most 2^52";
  }
  if (plan.members > long_max / plan.replicates || g > long_max / (plan.members * plan.replicates))
    return "too many members (G x members x replicates overflows long)";
  return "";
}

// ---- the member's values ---------------------------------------------------------------------------

// out[0 .. plan.vary.size()) = the values of member i (0 <= i < member_count(plan)), in the order of
// plan.vary. Depends on (plan, i) only; allocates nothing. The plan must pass check_plan.
//
// random: u_s = unit_open(Philox({seed, j}, {tag_random, s})), independent across s and j.
// sobol:  u_s = unit_open((x_s ^ shift_s) << 12) with x_s = sobol_coordinate_bits(draw, s) and the random
//         digital shift shift_s = top 52 bits of Philox({seed, replicate}, {tag_sobol_shift, s}).
//         XOR with a constant maps every base-2 elementary interval onto another one, so each
//         replicate keeps the (t, m, s)-net property of the first 2^m points while each point is
//         uniform on the 2^-52 grid (Owen 1998, "Scrambling Sobol' and Niederreiter-Xing points";
//         Matoušek 1998, "On the L2-discrepancy for anchored boxes"); replicates are independent
//         randomizations, so their spread is an error bar (L'Ecuyer & Lemieux 2002, "Recent advances
//         in randomized quasi-Monte Carlo methods"). Owen's nested scrambling would also improve the
//         convergence rate for smooth integrands; it is not implemented.
// lhs:    u_s = (pi_s(draw) + jitter) / members with pi_s = lhs_permute(., members, seed, replicate, s)
//         and jitter = unit_open(Philox({seed, j}, {tag_lhs_jitter, s})) (McKay, Beckman & Conover
//         1979): per replicate every one of the `members` strata of every dimension holds one point.
//         Rounding can push (pi + jitter) / members onto a stratum's upper edge; u is kept below 1.
// saltelli: as sobol in 2k dimensions (k drawn inputs): the member's draw is slot `draw % slots` of
//         design row `draw / slots` (saltelli_design), and input s takes coordinate s of the Sobol'
//         point of index row (from A) or coordinate k + s (from B), each coordinate with its own
//         digital shift: A and B are independent, and a row's points share their coordinates as the
//         design requires.
// grid:   the grid values at the row-major digits of grid_point (last grid dimension fastest).
// Then value = from_unit(dist, u_s).
inline void sample_member(const sampling_plan& plan, long i, double* out) {
  const long g_total = grid_size(plan);
  long grid_point = i % g_total;
  const long point = i / g_total;  // j = replicate * members + draw
  const bool pure_grid = is_pure_grid(plan);
  const long members = pure_grid ? 1 : plan.members;
  const long draw = point % members;
  const std::uint64_t replicate = static_cast<std::uint64_t>(point / members);
  const std::uint64_t seed = plan.seed;

  // Grid digits, last dimension fastest: walk the dimensions backwards.
  for (std::size_t k = plan.vary.size(); k-- > 0;) {
    const distribution& d = plan.vary[k].dist;
    if (d.kind != distribution_kind::grid) continue;
    const long n = static_cast<long>(d.grid.size());
    out[k] = d.grid[static_cast<std::size_t>(grid_point % n)];
    grid_point /= n;
  }
  if (pure_grid) return;

  constexpr double below_one = 1.0 - 0x1p-53;
  int drawn_before = 0;
  for (std::size_t k = 0; k < plan.vary.size(); ++k) {
    const distribution& d = plan.vary[k].dist;
    if (d.kind == distribution_kind::grid) continue;
    const std::uint64_t s = static_cast<std::uint64_t>(drawn_before++);
    double u = 0.5;
    switch (plan.sampler) {
      case sampler_kind::random:
        u = unit_open(philox_word(seed, static_cast<std::uint64_t>(point), detail::tag_random, s));
        break;
      case sampler_kind::sobol: {
        const std::uint64_t x = sobol_coordinate_bits(static_cast<std::uint64_t>(draw), static_cast<int>(s));
        const std::uint64_t shift = philox_word(seed, replicate, detail::tag_sobol_shift, s) >> (64 - sobol_bits);
        u = unit_open((x ^ shift) << (64 - sobol_bits));
        break;
      }
      case sampler_kind::lhs: {
        const long stratum = lhs_permute(draw, members, seed, replicate, s);
        const double jitter = unit_open(philox_word(seed, static_cast<std::uint64_t>(point), detail::tag_lhs_jitter, s));
        u = std::min((static_cast<double>(stratum) + jitter) / static_cast<double>(members), below_one);
        break;
      }
      case sampler_kind::saltelli: {
        // Row `draw / slots` of the design is the 2k-dimensional Sobol' point of that index: A_j its
        // first k coordinates, B_j its last k; the slot says which of them this input takes.
        const saltelli_design design{drawn_dimension_count(plan), plan.second_order};
        const long row = draw / design.slots();
        const int slot = static_cast<int>(draw % design.slots());
        const int dimension = static_cast<int>(s) + (saltelli_takes_b(design, slot, static_cast<int>(s)) ? design.inputs : 0);
        const std::uint64_t x = sobol_coordinate_bits(static_cast<std::uint64_t>(row), dimension);
        const std::uint64_t shift = philox_word(seed, replicate, detail::tag_sobol_shift,
                                                static_cast<std::uint64_t>(dimension)) >> (64 - sobol_bits);
        u = unit_open((x ^ shift) << (64 - sobol_bits));
        break;
      }
      case sampler_kind::grid:
        break;  // rejected by check_plan
    }
    out[k] = from_unit(d, u);
  }
}

}  // namespace lockstep::study
