/* kbd/ptx/tmap.h - tensor-map encoding for a GPU program (twin of cpu/tmap.h): host code, in nvcc builds
 * and in the plain C host files of a GPU program.
 *
 * cuTensorMapEncodeTiled is a DRIVER API function (libcuda). kbd programs link only the runtime (cudart),
 * so the function is fetched from the installed driver through the runtime's entry-point query,
 * cudaGetDriverEntryPointByVersion (CUDA 12.5+), asking for the ABI of CUDA 12.0, the version that
 * introduced it. A driver too old to have it, or no driver at all, becomes a status naming the lookup.
 * kbd_tensor_map_encode() has validated the description before this runs, so a driver rejection here means
 * the driver has a rule kbd's table lacks: the message says so.
 */
#ifndef KBD_PTX_TMAP_H
#define KBD_PTX_TMAP_H

#include "../tensormap.h"

#if !KBD_MODE_CPU
#include <cuda.h> /* types and enums only: no libcuda symbol is referenced */
#include <cuda_runtime_api.h>

#include "alloc.h" /* kbd_cuda_status_ */

/* The descriptor's enums are the driver's, so they pass unchanged. */
KBD_STATIC_ASSERT(sizeof(kbd_tensor_map) == sizeof(CUtensorMap) &&
                      KBD_ALIGNOF(kbd_tensor_map) >= KBD_ALIGNOF(CUtensorMap),
                  "kbd_tensor_map must have CUtensorMap's size and alignment");
KBD_STATIC_ASSERT((int)CU_TENSOR_MAP_DATA_TYPE_UINT8 == KBD_TMAP_DT_U8 &&
                      (int)CU_TENSOR_MAP_DATA_TYPE_INT32 == KBD_TMAP_DT_I32 &&
                      (int)CU_TENSOR_MAP_DATA_TYPE_FLOAT16 == KBD_TMAP_DT_F16 &&
                      (int)CU_TENSOR_MAP_DATA_TYPE_FLOAT32 == KBD_TMAP_DT_F32 &&
                      (int)CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 == KBD_TMAP_DT_BF16 &&
                      (int)CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ == KBD_TMAP_DT_TF32_FTZ &&
                      (int)CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B == KBD_TMAP_DT_16U6_ALIGN16B,
                  "kbd_tmap_dtype must equal CUtensorMapDataType");
KBD_STATIC_ASSERT((int)CU_TENSOR_MAP_INTERLEAVE_32B == KBD_TMAP_INTERLEAVE_32B &&
                      (int)CU_TENSOR_MAP_SWIZZLE_128B == KBD_TMAP_SWIZZLE_128B &&
                      (int)CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B == KBD_TMAP_SWIZZLE_128B_ATOM_64B &&
                      (int)CU_TENSOR_MAP_L2_PROMOTION_L2_256B == KBD_TMAP_L2_256B &&
                      (int)CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA == KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA,
                  "kbd_tmap_{interleave,swizzle,l2,oob} must equal the CUtensorMap enums");

typedef CUresult(CUDAAPI *kbd_ptx_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                                   const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                                   const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
typedef CUresult(CUDAAPI *kbd_ptx_error_name_fn)(CUresult, const char **);

/* A driver function by name and ABI version; NULL with *st set when the runtime or driver lacks it. A data
 * pointer is copied into a function pointer with memcpy: C has no cast between the two. */
static inline void *kbd_ptx_driver_fn(const char *name, unsigned version, kbd_status *st, KBD_SITE_PARAMS) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSuccess;
  kbd_text what = KBD_TEXT_INIT;
  kbd_text_append(&what, "%s:%d: kbd_tensor_map_encode: cudaGetDriverEntryPointByVersion(\"%s\", %u)", KBD_SITE_ARGS,
                  name, version);
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &q);
  if (e != cudaSuccess) {
    *st = kbd_cuda_status_(e, kbd_text_str(&what));
    fn = NULL;
  } else if (q != cudaDriverEntryPointSuccess || !fn) {
    *st = kbd_status_make(KBD_ERR_CUDA, "%s: %s", kbd_text_str(&what),
                          q == cudaDriverEntryPointVersionNotSufficent
                              ? "the installed driver is older than this ABI version"
                              : "the installed driver has no such symbol");
    fn = NULL;
  }
  kbd_text_free(&what);
  return fn;
}

static inline kbd_status kbd_hw_tensor_map_encode(kbd_tensor_map *out, const kbd_tensor_map_desc *d, KBD_SITE_PARAMS) {
  /* The entry-point query and the encode act on the current context: cudaFree(NULL) initialises the runtime
   * and makes the device's primary context current (a no-op once it is), and reports a missing device. */
  kbd_status st = kbd_cuda_status_(cudaFree(NULL), "kbd_tensor_map_encode: initialising the CUDA runtime");
  if (!kbd_ok(st)) return kbd_status_make(st.code, "%s:%d: %s", KBD_SITE_ARGS, st.msg);
  void *p = kbd_ptx_driver_fn("cuTensorMapEncodeTiled", 12000, &st, KBD_SITE_ARGS);
  if (!p) return st;
  kbd_ptx_encode_tiled_fn encode;
  memcpy(&encode, &p, sizeof encode);
  cuuint64_t dims[5] = {0, 0, 0, 0, 0}, strides[4] = {0, 0, 0, 0};
  cuuint32_t box[5] = {0, 0, 0, 0, 0}, estr[5] = {0, 0, 0, 0, 0};
  for (unsigned i = 0; i < d->rank && i < 5; i++) {
    dims[i] = d->global_dims[i];
    box[i] = d->box_dims[i];
    estr[i] = d->element_strides[i];
    if (i + 1 < d->rank) strides[i] = d->global_strides[i];
  }
  CUtensorMap m; /* *out changes only on success */
  const CUresult r = encode(&m, (CUtensorMapDataType)d->dtype, d->rank, (void *)(uintptr_t)d->global_address, dims,
                            strides, box, estr, (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
                            (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
  if (r != CUDA_SUCCESS) {
    const char *name = NULL;
    kbd_status ignored = kbd_status_ok();
    void *q = kbd_ptx_driver_fn("cuGetErrorName", 6000, &ignored, KBD_SITE_ARGS);
    if (q) {
      kbd_ptx_error_name_fn error_name;
      memcpy(&error_name, &q, sizeof error_name);
      if (error_name(r, &name) != CUDA_SUCCESS) name = NULL;
    }
    return kbd_status_make(KBD_ERR_CUDA,
                           "%s:%d: kbd_tensor_map_encode: cuTensorMapEncodeTiled returned %s (%d) for a description "
                           "that kbd_tensor_map_validate accepts (dtype = %s, rank = %u, interleave = %s, swizzle = "
                           "%s): this driver has a rule kbd's table lacks; please report it",
                           KBD_SITE_ARGS, name ? name : "an error", (int)r, kbd_tmap_dtype_name((int)d->dtype),
                           (unsigned)d->rank, kbd_tmap_interleave_name((int)d->interleave),
                           kbd_tmap_swizzle_name((int)d->swizzle));
  }
  memcpy(out, &m, sizeof m);
  return kbd_status_ok();
}

#endif /* !KBD_MODE_CPU */
#endif /* KBD_PTX_TMAP_H */
