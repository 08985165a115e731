// The rank decision of formulation/constraint_rank.hpp: which constraint rows are dependent, against
// Eigen's rank of the rows before each one on random matrices of known rank; the earlier rows kept;
// invariance under the rows' scales; zero and non-finite rows; the hysteresis between the drop and
// release thresholds; the fixed-size form.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "lockstep/formulation/constraint_rank.hpp"

namespace lockstep::test {
namespace {

using matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct decision {
  constraint_rank_result result;
  std::vector<double> distance;
};

decision decide(const matrix& J, std::uint64_t previous = 0, const constraint_rank_tolerances& tol = {}) {
  decision d;
  d.distance.assign(J.rows(), -1.0);
  std::vector<double> basis(J.size());
  d.result = constraint_rank(J.data(), static_cast<int>(J.rows()), static_cast<int>(J.cols()), static_cast<int>(J.cols()),
                             basis.data(), d.distance.data(), tol, previous);
  return d;
}

bool dependent(const decision& d, int row) { return ((d.result.dependent >> row) & 1u) != 0; }

// Row i is dependent exactly when it does not raise the rank of the independent rows before it
// (Eigen's rank-revealing QR with its default threshold, on exact-rank matrices).
std::uint64_t reference_dependent_rows(const matrix& J) {
  std::uint64_t mask = 0;
  std::vector<int> kept;
  for (int i = 0; i < J.rows(); ++i) {
    matrix rows(kept.size() + 1, J.cols());
    for (std::size_t j = 0; j < kept.size(); ++j) rows.row(j) = J.row(kept[j]);
    rows.row(kept.size()) = J.row(i);
    if (Eigen::ColPivHouseholderQR<matrix>(rows).rank() == static_cast<Eigen::Index>(kept.size()))
      mask |= std::uint64_t{1} << i;
    else
      kept.push_back(i);
  }
  return mask;
}

TEST(ConstraintRank, RandomMatricesOfKnownRankAgreeWithEigenRowByRow) {
  std::mt19937_64 rng(20261125);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> rows_of(1, 12), cols_of(1, 14);
  int deficient = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int m = rows_of(rng), n = cols_of(rng);
    const int r = std::uniform_int_distribution<int>(0, std::min(m, n))(rng);
    // J = B C with B m x r, C r x n: rank r; rows scaled over twelve decades.
    matrix B(m, r), C(r, n);
    for (int i = 0; i < B.size(); ++i) B.data()[i] = normal(rng);
    for (int i = 0; i < C.size(); ++i) C.data()[i] = normal(rng);
    matrix J = r > 0 ? matrix(B * C) : matrix::Zero(m, n);
    for (int i = 0; i < m; ++i) J.row(i) *= std::pow(10.0, std::uniform_real_distribution<double>(-6.0, 6.0)(rng));
    const decision d = decide(J);
    EXPECT_EQ(d.result.rank, r) << "trial " << trial << ": " << m << " x " << n << " of rank " << r;
    EXPECT_EQ(d.result.dependent, reference_dependent_rows(J)) << "trial " << trial;
    for (int i = 0; i < m; ++i) {
      if (dependent(d, i)) EXPECT_LE(d.distance[i], 1e-12) << "trial " << trial << " row " << i;
      else EXPECT_GT(d.distance[i], 1e-9) << "trial " << trial << " row " << i;
    }
    deficient += r < m;
  }
  EXPECT_GT(deficient, 100) << "the trials must exercise rank-deficient matrices";
}

TEST(ConstraintRank, KeepsTheEarlierRowsOfARedundantSetAndNamesTheLaterOnes) {
  matrix J(4, 5);
  J << 1.0, 2.0, 0.0, -1.0, 0.5,  //
      0.0, 1.0, 3.0, 0.0, 0.0,    //
      2.0, 0.0, 1.0, 1.0, 0.0,    //
      0.0, 0.0, 0.0, 0.0, 0.0;
  J.row(3) = 2.0 * J.row(0) - 0.5 * J.row(2);  // a loop closed twice
  const decision d = decide(J);
  EXPECT_EQ(d.result.rank, 3);
  EXPECT_EQ(d.result.dependent, std::uint64_t{1} << 3);
  EXPECT_LT(d.distance[3], 1e-15);
  // The same rows listed the other way round: now the first of them (row 1 of the swapped matrix) is
  // the dependent one.
  matrix swapped = J;
  swapped.row(0) = J.row(3);
  swapped.row(3) = J.row(0);
  const decision s = decide(swapped);
  EXPECT_EQ(s.result.rank, 3);
  EXPECT_EQ(s.result.dependent, std::uint64_t{1} << 3) << "row 3 (old row 0) now combines rows 0 and 2";
}

TEST(ConstraintRank, TheDecisionAndTheDistancesIgnoreTheRowsScales) {
  matrix J(3, 4);
  J << 1.0, 0.2, 0.0, 0.0,  //
      0.0, 1.0, 0.3, 0.0,   //
      1.0, 0.2 + 1e-7, 0.0, 0.0;
  const decision plain = decide(J);
  matrix scaled = J;
  scaled.row(0) *= 1e9;
  scaled.row(1) *= 1e-9;
  scaled.row(2) *= 1e-7;
  const decision other = decide(scaled);
  EXPECT_EQ(plain.result.dependent, other.result.dependent);
  EXPECT_EQ(plain.result.rank, 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(plain.distance[i], other.distance[i], 1e-12 * std::max(1.0, plain.distance[i]));
  // Row 2 leaves the span of rows 0 and 1 by less than the 1e-7 it differs from row 0 in one entry.
  EXPECT_GT(plain.distance[2], 1e-9);
  EXPECT_LT(plain.distance[2], 1e-7);
}

TEST(ConstraintRank, ZeroRowsAreDependentAndNonFiniteRowsCountAsDependentWithANanDistance) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  matrix J(4, 3);
  J << 0.0, 0.0, 0.0,  //
      1.0, 0.0, 0.0,   //
      nan, 1.0, 0.0,   //
      0.0, 1.0, 0.0;
  const decision d = decide(J);
  EXPECT_EQ(d.result.dependent, (std::uint64_t{1} << 0) | (std::uint64_t{1} << 2));
  EXPECT_EQ(d.result.rank, 2) << "the rows after a non-finite one are decided as if it were absent";
  EXPECT_EQ(d.distance[0], 0.0);
  EXPECT_TRUE(std::isnan(d.distance[2]));
  EXPECT_EQ(d.distance[3], 1.0);
  J(2, 0) = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isnan(decide(J).distance[2]));
}

// Row 1 at the angle s from row 0: distance sin(atan(s)).
matrix two_rows_at(double s) {
  matrix J(2, 2);
  J << 1.0, 0.0, 1.0, s;
  return J;
}

TEST(ConstraintRank, HysteresisKeepsARowsStateBetweenTheDropAndReleaseDistances) {
  const std::uint64_t row1 = std::uint64_t{1} << 1;
  // A first decision uses the drop threshold (1e-9).
  EXPECT_EQ(decide(two_rows_at(1e-10)).result.dependent, row1);
  EXPECT_EQ(decide(two_rows_at(1e-8)).result.dependent, 0u);
  // Between 1e-9 and 1e-6 the row keeps the state it had.
  for (double s : {2e-9, 1e-8, 1e-7, 9e-7}) {
    EXPECT_EQ(decide(two_rows_at(s), row1).result.dependent, row1) << s;
    EXPECT_EQ(decide(two_rows_at(s), 0).result.dependent, 0u) << s;
  }
  // Beyond the release threshold a dependent row comes back; below the drop threshold an independent
  // one goes.
  EXPECT_EQ(decide(two_rows_at(2e-6), row1).result.dependent, 0u);
  EXPECT_EQ(decide(two_rows_at(5e-10), 0).result.dependent, row1);
  // A distance path that goes 1e-5 -> 1e-10 -> 1e-7 -> 1e-10 -> 1e-5 switches twice, not four times.
  std::uint64_t state = 0;
  int switches = 0;
  for (double s : {1e-5, 3e-7, 1e-10, 1e-7, 5e-7, 1e-10, 1e-8, 1e-5, 3e-7}) {
    const std::uint64_t next = decide(two_rows_at(s), state).result.dependent;
    switches += next != state;
    state = next;
  }
  EXPECT_EQ(switches, 2);
  EXPECT_EQ(state, 0u);
}

TEST(ConstraintRank, TheFixedSizeFormDecidesAsThePointerForm) {
  mat<double, 3, 4> J{};
  const double rows[3][4] = {{1.0, 2.0, 3.0, 4.0}, {0.0, 1.0, 0.0, 1.0}, {1.0, 4.0, 3.0, 6.0}};  // row 2 = row 0 + 2 row 1
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) J(i, j) = rows[i][j];
  vec<double, 3> distance{};
  const constraint_rank_result fixed = constraint_rank(J, &distance);
  matrix E(3, 4);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) E(i, j) = rows[i][j];
  const decision d = decide(E);
  EXPECT_EQ(fixed.rank, 2);
  EXPECT_EQ(fixed.dependent, d.result.dependent);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(distance[i], d.distance[i]) << "bit for bit: the same code";
  // No rows at all.
  mat<double, 0, 3> none{};
  EXPECT_EQ(constraint_rank(none).rank, 0);
}

}  // namespace
}  // namespace lockstep::test
