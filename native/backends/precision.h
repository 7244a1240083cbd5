// precision.h: what a build's `precision` list means for each TensorRT
// flavour, as a pure function so it can be tested without TensorRT.
// shim.cc turns the result into BuilderFlags.
#ifndef TAM_BACKENDS_PRECISION_H
#define TAM_BACKENDS_PRECISION_H

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_table.h"
#include "settings_table.h"

namespace tam {

// The builder flags a precision can turn on. Named after nvinfer1::BuilderFlag.
enum class PrecisionFlag { kTF32, kFP16, kBF16, kINT8, kFP8 };

// BuilderFlag::kBF16 arrived in TensorRT 9.0, so every 10.x library has it.
// Kept as a number so `best` follows the library actually loaded, not the
// headers, should a flag ever be added within 10.x.
constexpr int32_t kFirstTensorRT10MinorWithBF16 = 0;

namespace detail {

inline bool is_known_precision(const std::string& p) { return contains(allowed::precision, p); }

inline std::string known_precisions() {
  std::string list;
  for (const auto& p : allowed::precision) list += (list.empty() ? "" : ", ") + p;
  return list;
}

// in_model_hint says how to get precision p from a strongly typed network.
inline std::string in_model_hint(const std::string& p) {
  if (p == "fp32") return "an fp32 model already builds in fp32";
  if (p == "int8" || p == "fp8") return "quantize the ONNX model (QuantizeLinear/DequantizeLinear to " + p + ")";
  if (p == "best") return "there is no \"all precisions\" switch; cast or quantize the ONNX model where you want it";
  return "cast the ONNX model's tensors to " + p;
}

inline void add_flag(std::vector<PrecisionFlag>& flags, PrecisionFlag f) {
  if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.push_back(f);
}

}  // namespace detail

// precision_flags checks a build's precision list against the flavour and
// returns the builder flags to set, without duplicates, in list order.
// library_minor is the loaded library's minor version (it decides what
// `best` includes). Throws std::invalid_argument saying what is allowed.
//
//   TensorRT 10, weakly typed: fp32 sets nothing (FP32 is always allowed);
//     fp16, bf16, int8, fp8, tf32 set their flag; best sets fp16, int8 and
//     bf16 (what trtexec --best meant: every precision the library has).
//   TensorRT 11 and TensorRT-RTX, and TensorRT 10 with strongly_typed: the
//     network takes its types from the model, so only tf32 (a math mode for
//     fp32 tensors, not a type) is accepted.
inline std::vector<PrecisionFlag> precision_flags(Flavour flavour, int32_t library_minor,
                                                  const std::vector<std::string>& precision, bool strongly_typed) {
  std::vector<PrecisionFlag> flags;
  for (const auto& p : precision) {
    if (!detail::is_known_precision(p))
      throw std::invalid_argument("precision \"" + p + "\" is unknown; allowed: " + detail::known_precisions());
    if (p == "tf32") {
      detail::add_flag(flags, PrecisionFlag::kTF32);
      continue;
    }
    if (flavour != Flavour::kTRT10)
      throw std::invalid_argument("precision \"" + p + "\": " + flavour_name(flavour) +
                                  " networks are always strongly typed, so the ONNX model's types decide precision "
                                  "and precision flags do not exist; remove precision (only tf32 is allowed) and "
                                  "express it in the model instead: " + detail::in_model_hint(p));
    if (strongly_typed)
      throw std::invalid_argument("precision \"" + p + "\" contradicts strongly_typed: a strongly typed network takes "
                                  "its types from the model; remove one of them");
    if (p == "fp16") detail::add_flag(flags, PrecisionFlag::kFP16);
    if (p == "bf16") detail::add_flag(flags, PrecisionFlag::kBF16);
    if (p == "int8") detail::add_flag(flags, PrecisionFlag::kINT8);
    if (p == "fp8") detail::add_flag(flags, PrecisionFlag::kFP8);
    if (p == "best") {
      detail::add_flag(flags, PrecisionFlag::kFP16);
      detail::add_flag(flags, PrecisionFlag::kINT8);
      if (library_minor >= kFirstTensorRT10MinorWithBF16) detail::add_flag(flags, PrecisionFlag::kBF16);
    }
  }
  return flags;
}

}  // namespace tam

#endif
