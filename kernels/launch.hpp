// kernels/launch.hpp — how a backend runs one launch of a chunk: the engine's kernel over the
// active members, in blocks, on the backend's threads.
//
// A launch hands the backend the list of active members and a task; the backend calls the task on
// blocks of that list (one engine call per block, never per member), from as many threads as it has.
// Members are independent and each block writes only its members' slots, so the blocks' order and
// their threads cannot change a result. The serial backend runs one block; the omp backend
// (kernels/omp/launch.cpp, the lockstep::omp library) runs blocks of 8-64 members on the CPU cores'
// thread team (kernels/omp/thread_team.hpp), with no more threads than blocks.
#pragma once

namespace lockstep::detail {

// What one launch does to a block of members. Implementations are thread-safe for disjoint blocks
// and never throw (they record the first failure and the scheduler rethrows it after the launch).
struct block_task {
  virtual void operator()(const long* members, long count) const = 0;

 protected:
  ~block_task() = default;
};

}  // namespace lockstep::detail

// The omp backend's launch, defined in the lockstep::omp library (kernels/omp/launch.cpp);
// threads <= 0: lockstep::omp::default_threads().
extern "C" void lockstep_omp_launch(int threads, const long* active, long count,
                                    const lockstep::detail::block_task* task);
