// tests/cuda/member_trace.cu — one member on the device and on the host, attempt by attempt: where a
// device run goes wrong that the host's does not (docs/GPU.md section 9.2).
//
// For the pendulum (t1 = 2) and Andrews' squeezer (t1 = 0.003) with BDF on GGL at rtol = atol = 1e-8,
// it runs member_begin and then member_advance with `attempts` step attempts per call (as a launch
// does, attempts_per_sync) on one device thread and on the host, keeps the member's state after each
// call, and prints the first three calls and every call where the two differ in order, status, counts or
// step size (beyond 1e-6 relative: fused multiply-adds round the device's last bits differently), up to
// twelve. Exit status 1 when the device's final status or accepted steps differ from the host's.
//
//     member_trace [attempts per call, default 1]
//
// Not built by default: scripts/gpu-check.sh pack builds it (`--target member_trace`), and the tests stage
// runs `member_trace 1` on the GPU machine.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lockstep/lockstep.hpp"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/pendulum.hpp"

namespace trace {

using namespace lockstep;

template <class Model>
struct no_output {
  LOCKSTEP_HD void operator()(int, double, const state_vector<Model>&) const {}
};

constexpr int max_calls = 700;

// The member's state after its start and after each call, into out; returns how many.
template <class Model, class Method>
LOCKSTEP_HD int run_member(member_state<Model, Method>* out, double t1, const solver_options& opt, const double* p,
                           vec<double, Model::n> q0, vec<double, Model::n> v0, int attempts) {
  no_output<Model> sink;
  const double save[1] = {t1};
  member_state<Model, Method> ms;
  member_begin<Model>(ms, 0.0, t1, q0, v0, p, opt, save, 1, sink);
  out[0] = ms;
  int calls = 1;
  while (calls < max_calls) {
    const bool finished = member_advance<Model>(ms, attempts, t1, p, opt, save, 1, sink);
    out[calls++] = ms;
    if (finished) break;
  }
  return calls;
}

template <class Model, class Method>
__global__ void run_member_kernel(member_state<Model, Method>* out, int* calls, double t1, solver_options opt,
                                  const double* p, vec<double, Model::n> q0, vec<double, Model::n> v0, int attempts) {
  *calls = run_member<Model, Method>(out, t1, opt, p, q0, v0, attempts);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "member_trace: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

template <class Model, class Method>
bool compare(const char* name, double t1, int attempts) {
  using state = member_state<Model, Method>;
  // The model's default member: its parameters and the start of its default initial inputs.
  const auto defaults = ensemble<Model>::with_defaults(1);
  std::vector<double> p(defaults.params_of(0), defaults.params_of(0) + Model::n_params);
  if (p.empty()) p.push_back(0.0);  // a device copy of at least one word
  vec<double, Model::n> q0, v0;
  for (int j = 0; j < Model::n; ++j) q0[j] = defaults.q0[j], v0[j] = defaults.v0[j];
  solver_options opt;
  opt.rtol = opt.atol_q = opt.atol_v = opt.atol_lambda = 1e-8;
  opt.form = formulation::ggl;

  std::vector<state> host(max_calls), device(max_calls);
  const int host_calls = run_member<Model, Method>(host.data(), t1, opt, p.data(), q0, v0, attempts);
  state* d_out = nullptr;
  int* d_calls = nullptr;
  double* d_p = nullptr;
  check(cudaMalloc(&d_out, sizeof(state) * max_calls), "cudaMalloc");
  check(cudaMalloc(&d_calls, sizeof(int)), "cudaMalloc");
  check(cudaMalloc(&d_p, sizeof(double) * p.size()), "cudaMalloc");
  check(cudaMemcpy(d_p, p.data(), sizeof(double) * p.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaDeviceSetLimit(cudaLimitStackSize, 64 * 1024), "cudaDeviceSetLimit");
  run_member_kernel<Model, Method><<<1, 1>>>(d_out, d_calls, t1, opt, d_p, q0, v0, attempts);
  check(cudaDeviceSynchronize(), "the member's kernel");
  int device_calls = 0;
  check(cudaMemcpy(&device_calls, d_calls, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(device.data(), d_out, sizeof(state) * device_calls, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(d_out);
  cudaFree(d_calls);
  cudaFree(d_p);

  const state &h_end = host[host_calls - 1], &d_end = device[device_calls - 1];
  std::printf("== %s, %d attempt(s) per call: host %d calls, status %d, %ld steps; device %d calls, status %d, %ld steps\n",
              name, attempts, host_calls, int(h_end.status), h_end.counters.steps, device_calls, int(d_end.status),
              d_end.counters.steps);
  int shown = 0;
  for (int c = 0; c < std::min(host_calls, device_calls) && shown < 12; ++c) {
    const state &a = host[c], &b = device[c];
    const bool differ = a.method.order != b.method.order || a.status != b.status ||
                        a.counters.steps != b.counters.steps ||
                        a.counters.newton_iterations != b.counters.newton_iterations ||
                        a.counters.rejected_steps != b.counters.rejected_steps ||
                        std::abs(a.method.h - b.method.h) > 1e-6 * std::abs(a.method.h);
    if (!differ && c >= 3) continue;
    ++shown;
    for (const state* s : {&a, &b})
      std::printf("%s call %3d: t %.10g h %.6g order %d status %d steps %ld newton %ld newton-failures %ld "
                  "rejected %ld jacobians %ld factorizations %ld error %.3g\n",
                  s == &a ? "host  " : "device", c, s->method.t, s->method.h, s->method.order, int(s->status),
                  s->counters.steps, s->counters.newton_iterations, s->counters.newton_failures,
                  s->counters.rejected_steps, s->counters.jacobian_evaluations, s->counters.lu_factorizations,
                  s->method.error);
  }
  return h_end.status == d_end.status && h_end.counters.steps == d_end.counters.steps;
}

}  // namespace trace

int main(int argc, char** argv) {
  const int attempts = argc > 1 ? std::atoi(argv[1]) : 1;
  if (attempts < 1) {
    std::fprintf(stderr, "member_trace: attempts per call must be at least 1\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "member_trace: no CUDA device\n");
    return 3;
  }
  using lockstep::bdf_method;
  bool same = trace::compare<lockstep::models::pendulum, bdf_method>("pendulum, BDF", 2.0, attempts);
  same = trace::compare<lockstep::models::andrews, bdf_method>("andrews, BDF", 0.003, attempts) && same;
  return same ? 0 : 1;
}
