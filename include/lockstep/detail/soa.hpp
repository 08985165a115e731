// lockstep/detail/soa.hpp — structure-of-arrays storage of plain-data member states.
//
// A chunk of C members keeps word j of member i at data[j * stride + i] (stride >= C), so neighbouring
// GPU threads touch neighbouring addresses (docs/ARCHITECTURE.md section 3). A member's state is any trivially
// copyable struct; it is moved through its image as 64-bit words, which is exact (bitwise) and needs no
// per-field code: a kernel loads a member into locals, works, and stores it back.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "lockstep/core/hd.hpp"

namespace lockstep {

template <class State>
struct soa_image {
  static_assert(std::is_trivially_copyable_v<State>, "batch states must be plain data");
  static constexpr int words = static_cast<int>((sizeof(State) + 7) / 8);
};

// Word by word straight into the state (no intermediate image: on the GPU that would double the
// thread's stack frame). The last word may be partial when sizeof(State) is not a multiple of 8.
template <class State>
LOCKSTEP_HD void soa_load(const std::uint64_t* data, long stride, long i, State& s) {
  unsigned char* bytes = reinterpret_cast<unsigned char*>(&s);
  for (int j = 0; j < soa_image<State>::words; ++j) {
    const std::uint64_t word = data[j * stride + i];
    const std::size_t offset = std::size_t(j) * 8, count = sizeof(State) - offset < 8 ? sizeof(State) - offset : 8;
    memcpy(bytes + offset, &word, count);
  }
}

template <class State>
LOCKSTEP_HD void soa_store(std::uint64_t* data, long stride, long i, const State& s) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&s);
  for (int j = 0; j < soa_image<State>::words; ++j) {
    std::uint64_t word = 0;
    const std::size_t offset = std::size_t(j) * 8, count = sizeof(State) - offset < 8 ? sizeof(State) - offset : 8;
    memcpy(&word, bytes + offset, count);
    data[j * stride + i] = word;
  }
}

// Variable j of member i in an SoA array of doubles (parameters, initial inputs, outputs).
struct member_view {
  double* data;
  long stride;
  long i;
  LOCKSTEP_HD double& operator[](int j) const { return data[j * stride + i]; }
};

struct const_member_view {
  const double* data;
  long stride;
  long i;
  LOCKSTEP_HD double operator[](int j) const { return data[j * stride + i]; }
};

}  // namespace lockstep
