/* A fake libnccl for one rank over the fake libcuda, so that tests/interop/nccl_step.c rehearses its
 * ordering in CI: ncclAllReduce of a single rank is a copy of its input, enqueued on the caller's stream
 * with the fake's own cuMemcpyAsync (which honours FAKECUDA_COPY_DELAY_US: a collective not ordered after
 * rig's write, or rig's next kernel not ordered after it, then shows as wrong elements). It loads the
 * library rig loaded (RIG_CUDA_LIBRARY), exactly as NCCL uses the machine's libcuda. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct { char internal[128]; } nccl_unique_id;
struct nccl_comm {
  int ranks;
};

enum { SUCCESS = 0, UNHANDLED_CUDA_ERROR = 1, INVALID_ARGUMENT = 4, INVALID_USAGE = 5 };
enum { TYPE_UINT32 = 3, TYPE_FLOAT32 = 7, OP_SUM = 0 };

static int (*copy_async)(unsigned long long dst, unsigned long long src, size_t bytes, void *stream);

EXPORT const char *ncclGetErrorString(int r) {
  switch (r) {
    case SUCCESS: return "no error";
    case UNHANDLED_CUDA_ERROR: return "unhandled cuda error (fake)";
    case INVALID_ARGUMENT: return "invalid argument (fake)";
    default: return "invalid usage (fake: one rank only)";
  }
}

EXPORT int ncclGetUniqueId(nccl_unique_id *id) {
  if (!id) return INVALID_ARGUMENT;
  memset(id, 0, sizeof *id);
  memcpy(id->internal, "fake-nccl", 9);
  return SUCCESS;
}

EXPORT int ncclCommInitRank(struct nccl_comm **comm, int ranks, nccl_unique_id id, int rank) {
  (void)id;
  if (!comm) return INVALID_ARGUMENT;
  if (ranks != 1 || rank != 0) return INVALID_USAGE;
  const char *path = getenv("RIG_CUDA_LIBRARY");
  void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  copy_async = lib ? (int (*)(unsigned long long, unsigned long long, size_t, void *))dlsym(lib, "cuMemcpyAsync") : NULL;
  if (!copy_async) return UNHANDLED_CUDA_ERROR;
  *comm = calloc(1, sizeof **comm);
  if (!*comm) return UNHANDLED_CUDA_ERROR;
  (*comm)->ranks = 1;
  return SUCCESS;
}

EXPORT int ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, struct nccl_comm *comm,
                         void *stream) {
  if (!comm || (type != TYPE_UINT32 && type != TYPE_FLOAT32) || op != OP_SUM) return INVALID_ARGUMENT;
  /* one rank: the sum is the input */
  return copy_async((uintptr_t)recv, (uintptr_t)send, count * 4, stream) ? UNHANDLED_CUDA_ERROR : SUCCESS;
}

EXPORT int ncclCommDestroy(struct nccl_comm *comm) {
  free(comm);
  return SUCCESS;
}
