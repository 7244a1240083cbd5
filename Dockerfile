# trt-action in NVIDIA's TensorRT container: the binary plus the TensorRT 10
# backend, compiled against the container's own headers so the backend and
# the library it loads are always the same release.
#
#   docker build -t trt-action .
#   docker run --rm --gpus all -v "$PWD:/work" -w /work trt-action build -f trt-builds.yml
#
# The tag picks the TensorRT 10.x release (see NVIDIA's container release
# notes). Moving to another release only needs this tag changed: the
# backend is rebuilt against whatever headers it ships.
ARG TENSORRT_IMAGE=nvcr.io/nvidia/tensorrt:25.06-py3
ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS go

FROM ${TENSORRT_IMAGE} AS build
ARG VERSION=dev
RUN apt-get update \
    && apt-get install -y --no-install-recommends g++ make \
    && rm -rf /var/lib/apt/lists/*
COPY --from=go /usr/local/go /usr/local/go
ENV PATH=/usr/local/go/bin:$PATH \
    GOTOOLCHAIN=local \
    CGO_ENABLED=1
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The container installs NvInfer.h and NvOnnxParser.h from its Debian
# packages into the multiarch include folder.
# bin/ is removed first: a work tree's own bin/lib (say a TensorRT-RTX
# backend) must not end up in the image.
RUN rm -rf bin \
    && make build VERSION="${VERSION}" TRT10_INCLUDE=/usr/include/x86_64-linux-gnu \
    && test -x bin/trt-action && test -f bin/lib/libtam_trt10.so && test -f bin/lib/libtam_host.so

FROM ${TENSORRT_IMAGE}
COPY --from=build /src/bin/trt-action /usr/local/bin/trt-action
# ResolveBackend looks in <exe dir>/../lib/trt-action.
COPY --from=build /src/bin/lib/ /usr/local/lib/trt-action/
COPY LICENSE /usr/local/share/doc/trt-action/LICENSE
ENTRYPOINT ["/usr/local/bin/trt-action"]
