import fakecore

fakecore.define(globals(), entries=("build_engine", "build_serialized_network"), monitor=False)
