/* A fake libnccl over the fake libcuda, so that tests/interop/nccl_step.c rehearses its ordering in CI, with
 * one rank or one rank per fake GPU of this process (one thread driving them all, as nccl_step does).
 *
 * Model: an all-reduce is work on each rank's stream, as NCCL's kernels are: the fake enqueues one host
 * function per rank (the fake libcuda's cuLaunchHostFunc) that, once that rank's stream reaches it, waits
 * for every rank's stream to arrive (NCCL's kernels wait for their peers the same way, spinning on flags,
 * not by stream waits), sums every rank's input after FAKECUDA_COPY_DELAY_US, waits for every rank to have
 * read, and only then writes its rank's output. So a rank's stream that does not wait for rig's write of
 * its input, or rig's work that does not wait for the stream past the collective, shows as wrong elements;
 * and since the fake's own order between ranks owes nothing to stream waits, a fake libcuda that drops
 * them (FAKECUDA_IGNORE_WAITS=1) breaks only the orders rig and the program made.
 *
 * As in NCCL: ranks of one process are made inside ncclGroupStart/ncclGroupEnd, each with its GPU current
 * (two ranks on one GPU are refused), and their collectives are called inside one group. Where NCCL would
 * wait for ever (a rank of several outside a group, a group missing a rank's call) the fake answers
 * ncclInvalidUsage, with the reason in ncclGetLastError. It loads the library rig loaded
 * (RIG_CUDA_LIBRARY), exactly as NCCL uses the machine's libcuda. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_RANKS 8
#define MAX_PENDING 64
#define PEER_WAIT_S 20 /* a rank whose peers never arrive gives up (its output untouched) rather than hang */

typedef struct { char internal[128]; } nccl_unique_id;

enum { SUCCESS = 0, UNHANDLED_CUDA_ERROR = 1, SYSTEM_ERROR = 2, INVALID_ARGUMENT = 4, INVALID_USAGE = 5 };
enum { TYPE_UINT32 = 3, TYPE_FLOAT32 = 7, OP_SUM = 0 };

/* The ranks of one unique id in this process. */
struct clique {
  nccl_unique_id id;
  int ranks, live; /* live: communicators made and not destroyed */
  void *ctx[MAX_RANKS];  /* the context current when each rank was made; null: not made */
  struct clique *next;
};

struct nccl_comm {
  struct clique *clique;
  int rank;
};

/* One all-reduce as every rank's stream runs it: what each rank hands in, and the two meetings. */
struct collective {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int ranks, launched;  /* launched: host functions enqueued (fewer than ranks if an enqueue failed) */
  int arrived, read, left;
  size_t count;
  int type;
  long long delay_us;
  const void *send[MAX_RANKS];
  void *recv[MAX_RANKS];
  struct rank_op {
    struct collective *c;
    int rank;
  } ops[MAX_RANKS];
};

static struct {
  int (*launch_host_func)(void *stream, void (*fn)(void *), void *data);
  int (*ctx_get_current)(void **ctx);
  long long (*query)(const char *name);
  pthread_mutex_t lock; /* cliques */
  struct clique *cliques;
  unsigned long long ids;
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A group's calls, per thread as NCCL's groups are. */
static __thread int depth;
static __thread int pending_count;
static __thread struct pending {
  struct nccl_comm *comm;
  const void *send;
  void *recv;
  size_t count;
  int type;
  void *stream;
} pending[MAX_PENDING];

static __thread char last_error[256];

static int refuse(int r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return r;
}

EXPORT const char *ncclGetErrorString(int r) {
  switch (r) {
    case SUCCESS: return "no error";
    case UNHANDLED_CUDA_ERROR: return "unhandled cuda error (fake)";
    case SYSTEM_ERROR: return "unhandled system error (fake)";
    case INVALID_ARGUMENT: return "invalid argument (fake)";
    default: return "invalid usage (fake)";
  }
}

EXPORT const char *ncclGetLastError(struct nccl_comm *comm) {
  (void)comm;
  return last_error;
}

/* The fake libcuda's calls, once. */
static int load_cuda(void) {
  if (fake.launch_host_func) return SUCCESS;
  const char *path = getenv("RIG_CUDA_LIBRARY");
  void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return refuse(UNHANDLED_CUDA_ERROR, "fake libnccl: %s", dlerror());
  fake.ctx_get_current = (int (*)(void **))dlsym(lib, "cuCtxGetCurrent");
  fake.query = (long long (*)(const char *))dlsym(lib, "fakecuda_query");
  fake.launch_host_func = (int (*)(void *, void (*)(void *), void *))dlsym(lib, "cuLaunchHostFunc");
  if (!fake.launch_host_func || !fake.ctx_get_current || !fake.query)
    return refuse(UNHANDLED_CUDA_ERROR, "fake libnccl: %s is not the fake libcuda (no cuLaunchHostFunc, "
                  "cuCtxGetCurrent or fakecuda_query)", path && *path ? path : "libcuda.so.1");
  return SUCCESS;
}

EXPORT int ncclGetUniqueId(nccl_unique_id *id) {
  if (!id) return refuse(INVALID_ARGUMENT, "ncclGetUniqueId: null id");
  memset(id, 0, sizeof *id);
  pthread_mutex_lock(&fake.lock);
  unsigned long long n = ++fake.ids;
  pthread_mutex_unlock(&fake.lock);
  snprintf(id->internal, sizeof id->internal, "fake-nccl %d %llu", (int)getpid(), n);
  return SUCCESS;
}

/* ncclGroupStart/End nest; the outermost end runs what the group called. */
EXPORT int ncclGroupStart(void) {
  ++depth;
  return SUCCESS;
}

EXPORT int ncclCommInitRank(struct nccl_comm **comm, int ranks, nccl_unique_id id, int rank) {
  if (!comm) return refuse(INVALID_ARGUMENT, "ncclCommInitRank: null communicator");
  if (ranks < 1 || ranks > MAX_RANKS || rank < 0 || rank >= ranks)
    return refuse(INVALID_ARGUMENT, "ncclCommInitRank: rank %d of %d (the fake has 1 to %d ranks)", rank, ranks,
                  MAX_RANKS);
  if (ranks > 1 && depth == 0)
    return refuse(INVALID_USAGE, "ncclCommInitRank: rank %d of %d outside a group: the fake's ranks are one "
                  "process's, made in one ncclGroupStart/ncclGroupEnd", rank, ranks);
  int r = load_cuda();
  if (r) return r;
  void *ctx = NULL;
  if (fake.ctx_get_current(&ctx) != 0 || !ctx)
    return refuse(INVALID_USAGE, "ncclCommInitRank: rank %d: no GPU is current (NCCL takes the current one)", rank);
  pthread_mutex_lock(&fake.lock);
  struct clique *c = fake.cliques;
  while (c && memcmp(&c->id, &id, sizeof id) != 0) c = c->next;
  if (c && c->ranks != ranks) r = refuse(INVALID_ARGUMENT, "ncclCommInitRank: %d ranks, but the id's first rank said %d", ranks, c->ranks);
  else if (c && c->ctx[rank]) r = refuse(INVALID_ARGUMENT, "ncclCommInitRank: rank %d made twice", rank);
  for (int k = 0; !r && c && k < ranks; ++k)
    if (c->ctx[k] == ctx) r = refuse(INVALID_USAGE, "ncclCommInitRank: ranks %d and %d on one GPU", k, rank);
  struct nccl_comm *made = r ? NULL : calloc(1, sizeof *made);
  if (!r && !c) {
    c = calloc(1, sizeof *c);
    if (c) {
      c->id = id;
      c->ranks = ranks;
      c->next = fake.cliques;
      fake.cliques = c;
    }
  }
  if (!r && (!made || !c)) r = refuse(SYSTEM_ERROR, "ncclCommInitRank: out of memory");
  if (!r) {
    c->ctx[rank] = ctx;
    ++c->live;
    made->clique = c;
    made->rank = rank;
    *comm = made;
  } else {
    free(made);
  }
  pthread_mutex_unlock(&fake.lock);
  return r;
}

EXPORT int ncclCommDestroy(struct nccl_comm *comm) {
  if (!comm) return refuse(INVALID_ARGUMENT, "ncclCommDestroy: null communicator");
  pthread_mutex_lock(&fake.lock);
  struct clique *c = comm->clique;
  if (--c->live == 0) { /* collectives in flight hold none of it */
    struct clique **at = &fake.cliques;
    while (*at != c) at = &(*at)->next;
    *at = c->next;
    free(c);
  }
  pthread_mutex_unlock(&fake.lock);
  free(comm);
  return SUCCESS;
}

/* Waits, holding c->lock, until *counter reaches c->launched; 0 where PEER_WAIT_S passed first. */
static int meet(struct collective *c, int *counter) {
  ++*counter;
  pthread_cond_broadcast(&c->changed);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += PEER_WAIT_S;
  while (*counter < c->launched)
    if (pthread_cond_timedwait(&c->changed, &c->lock, &until) == ETIMEDOUT) return 0;
  return 1;
}

/* One rank's part of an all-reduce, run by that rank's stream. */
static void run_rank(void *data) {
  struct rank_op *op = data;
  struct collective *c = op->c;
  int rank = op->rank; /* op is c's: the last rank to leave frees it */
  void *recv = c->recv[rank];
  size_t bytes = c->count * 4;
  void *sum = malloc(bytes ? bytes : 1);
  pthread_mutex_lock(&c->lock);
  int all = meet(c, &c->arrived) && c->launched == c->ranks && sum;
  pthread_mutex_unlock(&c->lock);
  if (all) { /* every rank's stream is here: its input is written, as far as its stream knows */
    if (c->delay_us) usleep((useconds_t)c->delay_us);
    for (size_t i = 0; i < c->count; ++i) {
      if (c->type == TYPE_UINT32) {
        uint32_t s = 0;
        for (int k = 0; k < c->ranks; ++k) s += ((const uint32_t *)c->send[k])[i];
        ((uint32_t *)sum)[i] = s;
      } else {
        float s = 0;
        for (int k = 0; k < c->ranks; ++k) s += ((const float *)c->send[k])[i];
        ((float *)sum)[i] = s;
      }
    }
  }
  pthread_mutex_lock(&c->lock);
  all = meet(c, &c->read) && all; /* no rank writes before every rank read (an in-place reduce) */
  int left = --c->left;
  pthread_mutex_unlock(&c->lock);
  if (all) memcpy(recv, sum, bytes);
  else if (!sum)
    fprintf(stderr, "fake libnccl: rank %d of an all-reduce ran out of memory; its output is left as it was\n",
            rank);
  else
    fprintf(stderr, "fake libnccl: rank %d of an all-reduce waited up to %d s for the other ranks' streams (or "
            "one could not enqueue); its output is left as it was\n", rank, PEER_WAIT_S);
  free(sum);
  if (left == 0) {
    pthread_cond_destroy(&c->changed);
    pthread_mutex_destroy(&c->lock);
    free(c);
  }
}

/* Enqueues one all-reduce of a whole clique: calls[k] is rank k's. */
static int launch(struct pending *const *calls, int ranks) {
  struct collective *c = calloc(1, sizeof *c);
  if (!c) return refuse(SYSTEM_ERROR, "ncclAllReduce: out of memory");
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->changed, NULL);
  c->ranks = c->launched = c->left = ranks;
  c->count = calls[0]->count;
  c->type = calls[0]->type;
  c->delay_us = fake.query("copy_delay_us");
  for (int k = 0; k < ranks; ++k) {
    c->send[k] = calls[k]->send;
    c->recv[k] = calls[k]->recv;
    c->ops[k].c = c;
    c->ops[k].rank = k;
  }
  for (int k = 0; k < ranks; ++k) {
    if (fake.launch_host_func(calls[k]->stream, run_rank, &c->ops[k]) == 0) continue;
    /* ranks before k run with fewer peers (and give up at once); none after k will run */
    pthread_mutex_lock(&c->lock);
    c->launched = c->left = k;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    if (k == 0) {
      pthread_cond_destroy(&c->changed);
      pthread_mutex_destroy(&c->lock);
      free(c);
    }
    return refuse(UNHANDLED_CUDA_ERROR, "ncclAllReduce: rank %d's stream refused the work", k);
  }
  return SUCCESS;
}

/* Runs the group's all-reduces: per communicator's clique, the i-th call of every rank together. */
static int run_group(void) {
  int r = SUCCESS;
  char done[MAX_PENDING] = {0};
  for (int i = 0; i < pending_count && !r; ++i) {
    if (done[i]) continue;
    struct clique *c = pending[i].comm->clique;
    struct pending *calls[MAX_RANKS] = {0};
    for (int j = i; j < pending_count; ++j) /* the first not yet taken call of each rank of c */
      if (!done[j] && pending[j].comm->clique == c && !calls[pending[j].comm->rank]) {
        calls[pending[j].comm->rank] = &pending[j];
        done[j] = 1;
      }
    for (int k = 0; k < c->ranks && !r; ++k) {
      if (!calls[k])
        r = refuse(INVALID_USAGE, "ncclGroupEnd: rank %d of %d did not call the all-reduce the others called in "
                   "this group (NCCL would wait for it for ever)", k, c->ranks);
      else if (calls[k]->count != calls[0]->count || calls[k]->type != calls[0]->type)
        r = refuse(INVALID_USAGE, "ncclGroupEnd: rank %d's all-reduce is not rank 0's (count or type)", k);
    }
    if (!r && c->live < c->ranks)
      r = refuse(INVALID_USAGE, "ncclGroupEnd: %d of %d ranks were made", c->live, c->ranks);
    if (!r) r = launch(calls, c->ranks);
  }
  pending_count = 0;
  return r;
}

EXPORT int ncclGroupEnd(void) {
  if (depth == 0) return refuse(INVALID_USAGE, "ncclGroupEnd without ncclGroupStart");
  return --depth ? SUCCESS : run_group();
}

EXPORT int ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, struct nccl_comm *comm,
                         void *stream) {
  if (!comm) return refuse(INVALID_ARGUMENT, "ncclAllReduce: null communicator");
  if ((type != TYPE_UINT32 && type != TYPE_FLOAT32) || op != OP_SUM)
    return refuse(INVALID_ARGUMENT, "ncclAllReduce: the fake sums uint32 or float32 only (type %d, op %d)", type, op);
  if (count && (!send || !recv)) return refuse(INVALID_ARGUMENT, "ncclAllReduce: null buffer");
  if (depth == 0 && comm->clique->ranks > 1)
    return refuse(INVALID_USAGE, "ncclAllReduce: rank %d of %d outside a group: one thread driving several ranks "
                  "calls them in one ncclGroupStart/ncclGroupEnd", comm->rank, comm->clique->ranks);
  if (pending_count == MAX_PENDING) return refuse(INVALID_USAGE, "ncclAllReduce: more than %d calls in a group", MAX_PENDING);
  pending[pending_count++] = (struct pending){comm, send, recv, count, type, stream};
  return depth ? SUCCESS : run_group();
}
