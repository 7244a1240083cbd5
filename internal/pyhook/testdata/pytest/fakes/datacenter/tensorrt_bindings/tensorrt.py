# The bindings' extension module, where the classes live.
import fakecore

fakecore.define(
    globals(),
    entries=("build_serialized_network", "build_engine_with_config", "build_serialized_network_to_stream"),
)
