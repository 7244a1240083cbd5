// join.h: the comma-separated lists the backends' messages name things in
// ("allowed: fp32, fp16", "with settings: refit, sparsity"). TensorRT-free.
#ifndef TAM_BACKENDS_JOIN_H
#define TAM_BACKENDS_JOIN_H

#include <string>
#include <vector>

namespace tam {
namespace detail {

// join is items separated by ", ".
inline std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace detail
}  // namespace tam

#endif
