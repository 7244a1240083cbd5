// profiles.h: a request's optimization profiles (request.h) given to the
// builder config: one IOptimizationProfile per profile, added in the order
// written, so profile i of the matrix is the engine's profile index i (the
// index a program selects at run time, and trtexec's --profile=i). Included
// by shim.cc; settings_test.cc drives it on each flavour's headers with
// stand-ins, as it does builder_settings.h.
#ifndef TAM_BACKENDS_PROFILES_H
#define TAM_BACKENDS_PROFILES_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <NvInfer.h>

#include "builder_settings.h"
#include "request.h"

namespace tam {

inline std::string dims_text(const nvinfer1::Dims& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "," : "") + std::to_string(d.d[i]);
  return s + "]";
}

inline std::string dims_text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

inline nvinfer1::Dims to_dims(const std::vector<int64_t>& v) {
  nvinfer1::Dims d{};
  d.nbDims = static_cast<int32_t>(v.size());
  for (size_t i = 0; i < v.size(); ++i) d.d[i] = v[i];
  return d;
}

namespace detail {

inline bool is_dynamic(const nvinfer1::Dims& d) {
  for (int32_t k = 0; k < d.nbDims; ++k)
    if (d.d[k] < 0) return true;
  return false;
}

// check_names fails on a profile that names an input the model lacks.
inline void check_names(nvinfer1::INetworkDefinition& network, const std::vector<Profile>& profiles) {
  std::string names;
  for (int32_t i = 0; i < network.getNbInputs(); ++i) names += (i ? ", " : "") + std::string(network.getInput(i)->getName());
  for (size_t p = 0; p < profiles.size(); ++p) {
    for (const auto& entry : profiles[p]) {
      bool found = false;
      for (int32_t i = 0; i < network.getNbInputs(); ++i) found = found || entry.first == network.getInput(i)->getName();
      if (!found)
        throw std::runtime_error(profile_key(profiles.size(), p) + "." + entry.first +
                                 ": the model has no input of that name; its inputs: " + names);
    }
  }
}

// check_range fails on shapes that do not fit the input's dimensions.
inline void check_range(const std::string& where, const std::string& name, const nvinfer1::Dims& d, const ShapeRange& range) {
  if (static_cast<int32_t>(range.min.size()) != d.nbDims)
    throw std::runtime_error(where + ": input \"" + name + "\" has rank " + std::to_string(d.nbDims) + " " + dims_text(d) +
                             ", but min is " + dims_text(range.min));
  for (int32_t k = 0; k < d.nbDims; ++k) {
    if (d.d[k] >= 0 && (range.min[k] != d.d[k] || range.opt[k] != d.d[k] || range.max[k] != d.d[k]))
      throw std::runtime_error(where + ": dimension " + std::to_string(k) + " of \"" + name + "\" is fixed at " +
                               std::to_string(d.d[k]) + " " + dims_text(d));
    if (range.min[k] > range.opt[k] || range.opt[k] > range.max[k] || range.min[k] < 0)
      throw std::runtime_error(where + ": need 0 <= min <= opt <= max in every dimension; got min " + dims_text(range.min) +
                               ", opt " + dims_text(range.opt) + ", max " + dims_text(range.max));
  }
}

}  // namespace detail

// add_profiles gives config one optimization profile per item of profiles,
// in order, each holding the shapes of every dynamic input of network: a
// dynamic input needs shapes in every profile, a static one none, and a
// name the model lacks is an error. Without profiles, a network with a
// dynamic input fails naming it. A network without dynamic inputs gets no
// profile. Messages name each profile as the matrix wrote it (profile_key):
// shapes for one, profiles[i] for several.
inline void add_profiles(nvinfer1::IBuilder& builder, nvinfer1::INetworkDefinition& network,
                         nvinfer1::IBuilderConfig& config, const std::vector<Profile>& profiles,
                         const std::string& product, const TrtErrors& errors) {
  detail::check_names(network, profiles);
  const std::vector<Profile> none(1);
  const std::vector<Profile>& wanted = profiles.empty() ? none : profiles;
  for (size_t p = 0; p < wanted.size(); ++p) {
    const std::string key = profile_key(wanted.size(), p);
    nvinfer1::IOptimizationProfile* profile = builder.createOptimizationProfile();  // owned by the builder
    if (profile == nullptr)
      throw std::runtime_error(key + ": " + product + " could not create an optimization profile");
    bool dynamic = false;
    for (int32_t i = 0; i < network.getNbInputs(); ++i) {
      nvinfer1::ITensor* input = network.getInput(i);
      const std::string name = input->getName();
      const std::string where = key + "." + name;
      const nvinfer1::Dims d = input->getDimensions();
      auto it = wanted[p].find(name);
      if (!detail::is_dynamic(d)) {
        if (it != wanted[p].end())
          throw std::runtime_error(where + ": input \"" + name + "\" is not dynamic (its shape is " + dims_text(d) +
                                   "); shapes apply to dynamic inputs only");
        continue;
      }
      if (it == wanted[p].end())
        throw std::runtime_error("input \"" + name + "\" has a dynamic shape " + dims_text(d) + " (-1 = dynamic); give " +
                                 where + " with min, opt and max");
      const ShapeRange& range = it->second;
      detail::check_range(where, name, d, range);
      using Sel = nvinfer1::OptProfileSelector;
      const uint64_t mark = errors.mark();
      if (!profile->setDimensions(name.c_str(), Sel::kMIN, to_dims(range.min)) ||
          !profile->setDimensions(name.c_str(), Sel::kOPT, to_dims(range.opt)) ||
          !profile->setDimensions(name.c_str(), Sel::kMAX, to_dims(range.max)))
        throw std::runtime_error(where + ": " + product + " refused the shape: " + errors.since(mark));
      dynamic = true;
    }
    if (!dynamic) continue;  // no dynamic input: nothing to add (a name given for a static one failed above)
    const uint64_t mark = errors.mark();
    const int32_t index = config.addOptimizationProfile(profile);
    if (index < 0)
      throw std::runtime_error(key + ": the optimization profile was refused: " + errors.since(mark));
    if (index != static_cast<int32_t>(p))
      throw std::runtime_error(key + ": " + product + " gave the optimization profile index " + std::to_string(index) +
                               ", not " + std::to_string(p));
  }
}

}  // namespace tam

#endif
