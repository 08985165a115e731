// kernels/serial/launch.hpp — the reference backend: a plain loop over the active members.
#pragma once

namespace lockstep::serial {

template <class Functor>
void for_each_member(const long* active, long count, const Functor& f) {
  for (long a = 0; a < count; ++a) f(active[a]);
}

}  // namespace lockstep::serial
