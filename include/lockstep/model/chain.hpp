// lockstep/model/chain.hpp — N point masses linked by rigid rods, pinned at the origin:
// n = 2N, m = N, the scaling axis in system size.
#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <utility>

#include "lockstep/model/concept.hpp"

namespace lockstep::models {

namespace detail {

// The chain's name ("chain16") and its input names ("theta_7") depend on the template parameter N and
// must be constant strings (model_info and the front ends read them at compile time), so they are
// spelled out here at compile time, for any N.
constexpr int decimal_digits(int x) {
  int digits = 1;
  while (x >= 10) {
    x /= 10;
    ++digits;
  }
  return digits;
}

template <int Size>
struct fixed_text {
  char text[Size]{};
};

// prefix followed by the decimal digits of number >= 0; Size must hold both and the terminator.
template <int Size>
constexpr fixed_text<Size> numbered_text(const char* prefix, int number) {
  fixed_text<Size> out;
  int i = 0;
  for (; prefix[i] != '\0'; ++i) out.text[i] = prefix[i];
  const int digits = decimal_digits(number);
  for (int j = digits - 1; j >= 0; --j) {
    out.text[i + j] = static_cast<char>('0' + number % 10);
    number /= 10;
  }
  out.text[i + digits] = '\0';
  return out;
}

template <int N>
struct chain_labels {
  static constexpr int name_size = 5 + decimal_digits(N) + 1;     // "chain" + digits + '\0'
  static constexpr int angle_size = 6 + decimal_digits(N) + 1;    // "theta_" + digits + '\0'

  static constexpr std::array<fixed_text<angle_size>, N> make_angles() {
    std::array<fixed_text<angle_size>, N> out{};
    for (int i = 0; i < N; ++i) out[i] = numbered_text<angle_size>("theta_", i + 1);
    return out;
  }

  static constexpr int coordinate_size = 1 + decimal_digits(N) + 1;  // "x" + digits + '\0'
  static constexpr std::array<fixed_text<coordinate_size>, 2 * N> make_coordinates() {
    std::array<fixed_text<coordinate_size>, 2 * N> out{};
    for (int i = 0; i < N; ++i) {
      out[2 * i] = numbered_text<coordinate_size>("x", i + 1);
      out[2 * i + 1] = numbered_text<coordinate_size>("y", i + 1);
    }
    return out;
  }

  static constexpr fixed_text<name_size> name = numbered_text<name_size>("chain", N);
  static constexpr std::array<fixed_text<angle_size>, N> angles = make_angles();
  static constexpr std::array<fixed_text<coordinate_size>, 2 * N> coordinates = make_coordinates();
};

// coordinate_names = (x1, y1, ..., xN, yN).
template <int N, class Entries = std::make_index_sequence<2 * N>>
struct chain_coordinate_table;

template <int N, std::size_t... I>
struct chain_coordinate_table<N, std::index_sequence<I...>> {
  static constexpr const char* table[2 * N] = {chain_labels<N>::coordinates[I].text...};
};

// inputs = (theta0, theta_1, ..., theta_N). A per-link angle defaults to NaN, which means "not set:
// use theta0" (theta_i override theta0 link by link), so a study that sets only
// theta0 moves every link and one that sets theta_3 moves only link 3.
template <int N, class Links = std::make_index_sequence<N>>
struct chain_input_table;

template <int N, std::size_t... I>
struct chain_input_table<N, std::index_sequence<I...>> {
  static constexpr named_value table[N + 1] = {
      {"theta0", 0.5, "initial angle of every link from the downward vertical [rad]"},
      {chain_labels<N>::angles[I].text, std::numeric_limits<double>::quiet_NaN(),
       "initial angle of this link from the downward vertical [rad]; NaN (the default) means theta0"}...,
  };
};

}  // namespace detail

template <int N>
struct chain {
  static_assert(N >= 1, "a chain needs at least one link");

  static constexpr const char* name = detail::chain_labels<N>::name.text;  // "chain2", "chain4", ...
  static constexpr const char* description =
      "N point masses linked by rigid rods, pinned at the origin, Cartesian (x1, y1, ..., xN, yN); "
      "inputs: theta0 sets every link angle, theta_i (NaN = unset) overrides link i";
  static constexpr int links = N;
  static constexpr int n = 2 * N;  // q = (x1, y1, ..., xN, yN)
  static constexpr const auto& coordinate_names = detail::chain_coordinate_table<N>::table;
  static constexpr int m = N;      // Phi_i = (|p_i - p_(i-1)|^2 - L^2) / 2, p_0 = origin
  static constexpr int k = 0;

  static constexpr int n_params = 4;
  static constexpr named_value params[n_params] = {
      {"m", 1.0, "mass of each point mass [kg]"},
      {"L", 1.0, "length of each link [m]"},
      {"g", 9.81, "gravitational acceleration along -y [m/s^2]"},
      {"c", 0.0, "viscous damping on every mass, force -c v_i [kg/s]"},
  };
  static constexpr int n_inputs = N + 1;
  // A reference to the table built by pack expansion in detail::chain_input_table (a member array
  // cannot be initialized from a generated sequence directly); indexing and spans see an array.
  static constexpr const named_value (&inputs)[n_inputs] = detail::chain_input_table<N>::table;

  template <class T, class P>
  LOCKSTEP_HD static mat<T, n, n> mass(const vec<T, n>&, const P* p) {
    mat<T, n, n> M;
    for (int i = 0; i < n; ++i) M(i, i) = T(p[0]);
    return M;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, n> force(const T&, const vec<T, n>&, const vec<T, n>& v, const P* p) {
    const P& mass_ = p[0];
    const P& g = p[2];
    const P& c = p[3];
    vec<T, n> Q;
    for (int i = 0; i < N; ++i) {
      Q[2 * i] = -(c * v[2 * i]);
      Q[2 * i + 1] = -(mass_ * g) - c * v[2 * i + 1];
    }
    return Q;
  }

  template <class T, class P>
  LOCKSTEP_HD static vec<T, m> constraint(const T&, const vec<T, n>& q, const P* p) {
    const P& L = p[1];
    vec<T, m> phi;
    phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - L * L);
    for (int i = 1; i < N; ++i) {
      const T dx = q[2 * i] - q[2 * i - 2];
      const T dy = q[2 * i + 1] - q[2 * i - 1];
      phi[i] = 0.5 * (dx * dx + dy * dy - L * L);
    }
    return phi;
  }

  // Link i hangs at angle theta_i from the downward vertical (theta0 where theta_i is NaN); masses at
  // rest, so v0 = 0 satisfies G v0 = 0 trivially.
  LOCKSTEP_HD static void initial_state(const double* p, const double* in, vec<double, n>& q0,
                                        vec<double, n>& v0) {
    const double L = p[1];
    double x = 0.0, y = 0.0;
    for (int i = 0; i < N; ++i) {
      const double override_angle = in[1 + i];
      // x == x is false exactly for NaN (std::isnan is a host function; we never build with
      // -ffinite-math-only).
      const double theta = override_angle == override_angle ? override_angle : in[0];
      x = x + L * sin(theta);
      y = y - L * cos(theta);
      q0[2 * i] = x;
      q0[2 * i + 1] = y;
      v0[2 * i] = 0.0;
      v0[2 * i + 1] = 0.0;
    }
  }
};

}  // namespace lockstep::models
