/* fake_nvrtc.c — a test-only compiler double with NVRTC's C ABI, injected into kcached
 * through KCACHE_NVRTC_LIBRARY (never installed, never a backend kcached looks for).
 *
 * Contract: sources without a marker are compiled by the real NVRTC (found like kcached
 * finds it), so a daemon under this double still serves normal requests. A source containing
 *   KCACHE_FAKE_HANG          never returns from nvrtcCompileProgram (timeout tests);
 *   KCACHE_FAKE_CRASH         dies of SIGSEGV in nvrtcCompileProgram (crash tests);
 *   KCACHE_FAKE_HOG           allocates until an allocation fails, then aborts, as a C++
 *                             compiler's bad_alloc does (memory-limit tests);
 *   KCACHE_FAKE_WRONG_TARGET  is compiled by the real NVRTC for sm_80 whatever was asked
 *                             (the daemon must refuse the binary);
 *   KCACHE_FAKE_SLOW          sleeps 300 ms, then compiles normally (concurrency tests).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvrtcResult;
typedef void* nvrtcProgram;

typedef struct {
  const char* (*GetErrorString)(nvrtcResult);
  nvrtcResult (*Version)(int*, int*);
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*);
  nvrtcResult (*DestroyProgram)(nvrtcProgram*);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*);
} Api;

static Api real;
static int loaded = -1; /* -1 unknown, 0 missing, 1 loaded */

static int load_real(void) {
  if (loaded >= 0) return loaded;
  static const char* const names[] = {"libnvrtc.so.13", "libnvrtc.so.12",
                                      "/usr/local/cuda/lib64/libnvrtc.so.13",
                                      "/usr/local/cuda/lib64/libnvrtc.so.12",
                                      "/usr/local/cuda/lib64/libnvrtc.so"};
  void* h = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && h == NULL; ++i)
    h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  loaded = 0;
  if (h == NULL) return 0;
#define SYM(field, name)                                  \
  do {                                                     \
    *(void**)(&real.field) = dlsym(h, name);               \
    if (real.field == NULL) return 0;                      \
  } while (0)
  SYM(GetErrorString, "nvrtcGetErrorString");
  SYM(Version, "nvrtcVersion");
  SYM(CreateProgram, "nvrtcCreateProgram");
  SYM(DestroyProgram, "nvrtcDestroyProgram");
  SYM(CompileProgram, "nvrtcCompileProgram");
  SYM(GetCUBINSize, "nvrtcGetCUBINSize");
  SYM(GetCUBIN, "nvrtcGetCUBIN");
  SYM(GetProgramLogSize, "nvrtcGetProgramLogSize");
  SYM(GetProgramLog, "nvrtcGetProgramLog");
#undef SYM
  loaded = 1;
  return 1;
}

enum { kSuccess = 0, kOutOfMemory = 1, kInvalidInput = 4, kInvalidProgram = 5,
       kInternalError = 11 };

typedef struct {
  nvrtcProgram real_program; /* NULL when the real NVRTC is missing */
  char* source;
} Program;

const char* nvrtcGetErrorString(nvrtcResult r) {
  return load_real() ? real.GetErrorString(r) : "fake nvrtc: the real NVRTC is missing";
}

nvrtcResult nvrtcVersion(int* major, int* minor) {
  if (load_real()) return real.Version(major, minor);
  *major = 0;
  *minor = 0;
  return kSuccess;
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram* out, const char* src, const char* name, int n,
                               const char* const* headers, const char* const* names) {
  Program* p = calloc(1, sizeof *p);
  if (p == NULL) return kOutOfMemory;
  p->source = strdup(src);
  if (load_real()) {
    const nvrtcResult rc = real.CreateProgram(&p->real_program, src, name, n, headers, names);
    if (rc != kSuccess) {
      free(p->source);
      free(p);
      return rc;
    }
  }
  *out = p;
  return kSuccess;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  Program* p = *prog;
  if (p == NULL) return kInvalidProgram;
  if (p->real_program != NULL) real.DestroyProgram(&p->real_program);
  free(p->source);
  free(p);
  *prog = NULL;
  return kSuccess;
}

static void hog_until_refused(void) {
  for (;;) {
    char* block = malloc(64u << 20);
    if (block == NULL) abort(); /* what an uncaught std::bad_alloc ends in */
    memset(block, 1, 64u << 20);
  }
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n, const char* const* options) {
  Program* p = prog;
  if (strstr(p->source, "KCACHE_FAKE_HANG") != NULL)
    for (;;) pause();
  if (strstr(p->source, "KCACHE_FAKE_CRASH") != NULL) raise(SIGSEGV);
  if (strstr(p->source, "KCACHE_FAKE_HOG") != NULL) hog_until_refused();
  if (strstr(p->source, "KCACHE_FAKE_SLOW") != NULL) {
    const struct timespec t = {0, 300 * 1000 * 1000};
    nanosleep(&t, NULL);
  }
  if (p->real_program == NULL) return kInternalError;
  if (strstr(p->source, "KCACHE_FAKE_WRONG_TARGET") != NULL) {
    const char* swapped[64];
    int m = 0;
    for (int i = 0; i < n && m < 63; ++i)
      swapped[m++] = strncmp(options[i], "--gpu-architecture=", 19) == 0
                         ? "--gpu-architecture=sm_80"
                         : options[i];
    return real.CompileProgram(p->real_program, m, swapped);
  }
  return real.CompileProgram(p->real_program, n, options);
}

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* size) {
  const Program* p = prog;
  return p->real_program == NULL ? kInvalidInput : real.GetCUBINSize(p->real_program, size);
}

nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* out) {
  const Program* p = prog;
  return p->real_program == NULL ? kInvalidInput : real.GetCUBIN(p->real_program, out);
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* size) {
  const Program* p = prog;
  if (p->real_program == NULL) {
    *size = 1;
    return kSuccess;
  }
  return real.GetProgramLogSize(p->real_program, size);
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* out) {
  const Program* p = prog;
  if (p->real_program == NULL) {
    out[0] = '\0';
    return kSuccess;
  }
  return real.GetProgramLog(p->real_program, out);
}
