// standin.h: stand-ins for TensorRT's implementation tables, for the tests
// that need no TensorRT library (settings_test.cc, tee_test.cc): the classes
// gen_standin.sh generates from one version's NvInferImpl.h (the file the
// macro TAM_STANDINS names: VBuilderConfigDefaults and the others, each
// method returning Default), and ConfigOver, a builder config whose
// implementation is such a stand-in.
#ifndef TAM_BACKENDS_STANDIN_H
#define TAM_BACKENDS_STANDIN_H

#include <NvInfer.h>

#include <cstdlib>
#include <type_traits>

namespace tamtest {
// Default is what a generated stand-in method returns: success for bool
// setters, zero otherwise. A reference cannot be defaulted; no code under
// test calls such a method, and aborting says so loudly if one ever does.
template <typename T>
struct Default {
  static T get() {
    if constexpr (std::is_same_v<T, bool>) return true;
    else if constexpr (!std::is_void_v<T>) return T{};
  }
};
template <typename T>
struct Default<T&> {
  static T& get() { std::abort(); }
};

// The generated methods name TensorRT's types as NvInferImpl.h does.
using namespace nvinfer1;
using namespace nvinfer1::apiv;
// The stand-ins implement every method, deprecated ones too.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include TAM_STANDINS  // VBuilderConfigDefaults, VNetworkDefinitionDefaults, VLayerDefaults, VTensorDefaults, VConstantLayerDefaults,
                      // VBuilderDefaults, VOptimizationProfileDefaults
#pragma GCC diagnostic pop

// ConfigOver is an IBuilderConfig whose implementation is impl.
class ConfigOver : public IBuilderConfig {
 public:
  explicit ConfigOver(VBuilderConfig* impl) { mImpl = impl; }
};

}  // namespace tamtest

#endif
