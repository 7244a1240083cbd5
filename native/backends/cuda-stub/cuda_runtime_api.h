/* cuda_runtime_api.h stand-in for compiling the backends without the CUDA
 * toolkit. The TensorRT headers include it only for the opaque stream and
 * event handles in signatures the shim never calls; the typedefs match the
 * toolkit's. Searched last (-idirafter), so a real toolkit on the include
 * path wins. */
#ifndef TAM_CUDA_RUNTIME_API_STUB_H
#define TAM_CUDA_RUNTIME_API_STUB_H
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
#endif
