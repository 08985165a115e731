// lockstep/model/registry.hpp — the built-in models, by type (for dispatch) and by name (for front ends).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <tuple>

#include "lockstep/model/andrews.hpp"
#include "lockstep/model/car_axis.hpp"
#include "lockstep/model/chain.hpp"
#include "lockstep/model/concept.hpp"
#include "lockstep/model/double_pendulum.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/model/linear_oscillator.hpp"
#include "lockstep/model/pendulum.hpp"
#include "lockstep/model/slider_crank.hpp"

namespace lockstep {

template <class... Models>
struct model_list {
  static constexpr int size = sizeof...(Models);
  // Calls f.template operator()<Model>() for each model in order.
  template <class F>
  static constexpr void for_each(F&& f) {
    (f.template operator()<Models>(), ...);
  }
};

using builtin_models =
    model_list<models::pendulum, models::double_pendulum, models::chain<2>, models::chain<4>, models::chain<8>,
               models::chain<16>, models::slider_crank, models::andrews, models::car_axis, models::knife_edge,
               models::linear_oscillator>;

// What a front end needs to know of a model without instantiating anything for it.
struct model_info {
  std::string_view name;
  std::string_view description;
  int n, m, k;
  std::span<const named_value> params;
  std::span<const named_value> inputs;
  int n_events = 0;  // its event functions (stepper/events.hpp)
};

template <class Model>
constexpr model_info info_of() {
  static_assert(lockstep_check_model<Model>());
  // A model without named initial inputs (andrews, car_axis) declares no `inputs` table: a zero-length
  // array is ill-formed.
  std::span<const named_value> inputs;
  if constexpr (Model::n_inputs > 0) inputs = std::span<const named_value>(Model::inputs, Model::n_inputs);
  return {Model::name, Model::description, Model::n, Model::m, Model::k,
          std::span<const named_value>(Model::params, Model::n_params), inputs, event_count<Model>};
}

namespace detail {
template <class... Models>
constexpr std::array<model_info, sizeof...(Models)> make_table(model_list<Models...>) {
  return {info_of<Models>()...};
}
}  // namespace detail

inline constexpr auto builtin_model_table = detail::make_table(builtin_models{});

// The model called `name`, or nullptr.
constexpr const model_info* find_model(std::string_view name) {
  for (const auto& info : builtin_model_table)
    if (info.name == name) return &info;
  return nullptr;
}

// Calls f.template operator()<Model>() for the built-in model called `name`; returns false when there
// is none.
template <class F>
bool visit_model(std::string_view name, F&& f) {
  bool found = false;
  builtin_models::for_each([&]<class Model>() {
    if (!found && name == Model::name) {
      found = true;
      f.template operator()<Model>();
    }
  });
  return found;
}

// A built-in model's name as a template argument: builtin_model<"pendulum">.
template <std::size_t N>
struct builtin_model_name {
  char text[N];
  constexpr builtin_model_name(const char (&name)[N]) { std::copy_n(name, N, text); }
  constexpr std::string_view view() const { return {text, N - 1}; }
};

namespace detail {
template <class List>
struct model_tuple;
template <class... Models>
struct model_tuple<model_list<Models...>> {
  using type = std::tuple<Models...>;
};

constexpr int builtin_model_index(std::string_view name) {
  for (std::size_t i = 0; i < builtin_model_table.size(); ++i)
    if (builtin_model_table[i].name == name) return static_cast<int>(i);
  return -1;
}
}  // namespace detail

// The built-in model called Name, as a type: what generated code derives from it by name (the model a
// study adds event functions to: host/model_files/model_compiler.hpp, load_with_study_events).
template <builtin_model_name Name>
  requires(detail::builtin_model_index(Name.view()) >= 0)
using builtin_model =
    std::tuple_element_t<detail::builtin_model_index(Name.view()), typename detail::model_tuple<builtin_models>::type>;

}  // namespace lockstep
