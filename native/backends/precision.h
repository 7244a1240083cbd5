// precision.h: what a build's `precision` list means for each TensorRT
// flavour, as a pure function so it can be tested without TensorRT.
// shim.cc turns the result into BuilderFlags.
#ifndef TAM_BACKENDS_PRECISION_H
#define TAM_BACKENDS_PRECISION_H

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_table.h"
#include "settings_table.h"

namespace tam {

namespace detail {

// in_model_hint says how to get precision p from a strongly typed network.
inline std::string in_model_hint(const std::string& p) {
  if (p == "fp32") return "an fp32 model already builds in fp32";
  if (p == "int8" || p == "fp8") return "quantize the ONNX model (QuantizeLinear/DequantizeLinear to " + p + ")";
  if (p == "best") return "there is no \"all precisions\" switch; cast or quantize the ONNX model where you want it";
  return "cast the ONNX model's tensors to " + p;
}

}  // namespace detail

// precision_flags checks a build's precision list against the flavour and
// returns the precision values whose BuilderFlag to set (settings_enums.h's
// enums::precision names it), without duplicates, in list order: what the
// settings table says each value asks for (settings_table.h, parts::precision:
// best is fp16, int8 and bf16, what trtexec's --best sets; fp32 is nothing,
// FP32 being always allowed). Throws std::invalid_argument saying what is
// allowed.
//
//   TensorRT 10, weakly typed: every value.
//   TensorRT 11 and TensorRT-RTX, and TensorRT 10 with strongly_typed: the
//     network takes its types from the model, so only tf32 (a math mode for
//     fp32 tensors, not a type) is accepted.
inline std::vector<std::string> precision_flags(Flavour flavour, const std::vector<std::string>& precision,
                                                bool strongly_typed) {
  std::vector<std::string> flags;
  for (const auto& p : precision) {
    const std::vector<std::string> parts = parts::precision(p);  // throws on a value the table lacks
    if (p != "tf32" && flavour != Flavour::kTRT10)
      throw std::invalid_argument("precision \"" + p + "\": " + flavour_name(flavour) +
                                  " networks are always strongly typed, so the ONNX model's types decide precision "
                                  "and precision flags do not exist; remove precision (only tf32 is allowed) and "
                                  "express it in the model instead: " + detail::in_model_hint(p));
    if (p != "tf32" && strongly_typed)
      throw std::invalid_argument("precision \"" + p + "\" contradicts strongly_typed: a strongly typed network takes "
                                  "its types from the model; remove one of them");
    for (const auto& part : parts)
      if (std::find(flags.begin(), flags.end(), part) == flags.end()) flags.push_back(part);
  }
  return flags;
}

}  // namespace tam

#endif
