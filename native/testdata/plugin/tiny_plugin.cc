// tiny_plugin.cc: the smallest plugin library TensorRT's plugin registry
// accepts: one creator (of no usable plugin) and the two entry points
// IPluginRegistry::loadLibrary looks up. backend_rtx_settings_test.go
// compiles it against the TensorRT-RTX headers and loads it through the
// `plugins` setting.
#include <NvInferRuntime.h>

namespace {

class TinyCreator : public nvinfer1::IPluginCreatorV3One {
 public:
  nvinfer1::IPluginV3* createPlugin(nvinfer1::AsciiChar const*, nvinfer1::PluginFieldCollection const*,
                                    nvinfer1::TensorRTPhase) noexcept override {
    return nullptr;
  }
  nvinfer1::PluginFieldCollection const* getFieldNames() noexcept override { return &fields_; }
  nvinfer1::AsciiChar const* getPluginName() const noexcept override { return "TamTinyPlugin"; }
  nvinfer1::AsciiChar const* getPluginVersion() const noexcept override { return "1"; }
  nvinfer1::AsciiChar const* getPluginNamespace() const noexcept override { return ""; }

 private:
  nvinfer1::PluginFieldCollection fields_{0, nullptr};
};

}  // namespace

extern "C" {

void setLoggerFinder(nvinfer1::ILoggerFinder*) {}

nvinfer1::IPluginCreatorInterface* const* getCreators(int32_t& nbCreators) {
  static TinyCreator creator;
  static nvinfer1::IPluginCreatorInterface* const creators[] = {&creator};
  nbCreators = 1;
  return creators;
}

}  // extern "C"
